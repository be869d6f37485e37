import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

/** A policy of a custom role as stored and shown (CONTRACT.md 16.1); core/data/record-policies.ts checks and compiles it. */
export interface RolePolicy {
  resource: string;
  actions: Array<'read' | 'create' | 'update' | 'delete'>;
  filter?: Record<string, unknown>;
  fields?: { read?: string[]; write?: string[] };
}

/** A custom role of a tenant. */
export interface RoleRecord {
  tenantId: string;
  name: string;
  description: string;
  policies: RolePolicy[];
  createdAt: string;
  updatedAt: string;
  version: number;
}

interface RoleRow {
  tenant_id: string;
  name: string;
  description: string;
  policies: string;
  created_at: string;
  updated_at: string;
  version: number | string;
}

const COLUMNS = 'tenant_id, name, description, policies, created_at, updated_at, version';

function toRecord(r: RoleRow): RoleRecord {
  return {
    tenantId: r.tenant_id, name: r.name, description: r.description, policies: JSON.parse(r.policies) as RolePolicy[],
    createdAt: r.created_at, updatedAt: r.updated_at, version: Number(r.version),
  };
}

/** SQL of `roles`, every statement led by the tenant. */
export class RolesRepository {
  constructor(private readonly db: Database) {}

  async insert(rc: RequestContext, role: RoleRecord): Promise<void> {
    await this.db.sql(rc).run(this.db.query('roles').insert({
      tenant_id: role.tenantId, name: role.name, description: role.description, policies: JSON.stringify(role.policies),
      created_at: role.createdAt, updated_at: role.updatedAt, version: role.version,
    }));
  }

  async find(rc: RequestContext | null, tenantId: string, name: string): Promise<RoleRecord | null> {
    const rows = await this.db.sql(rc).rows<RoleRow>(`SELECT ${COLUMNS} FROM roles WHERE tenant_id = ? AND name = ?`, [tenantId, name]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(rc: RequestContext | null, tenantId: string): Promise<RoleRecord[]> {
    const rows = await this.db.sql(rc).rows<RoleRow>(`SELECT ${COLUMNS} FROM roles WHERE tenant_id = ? ORDER BY name`, [tenantId]);
    return rows.map(toRecord);
  }

  /** Replaces the role if it is still at `version`: false when it is gone or another change came first. */
  async replace(rc: RequestContext, role: RoleRecord, version: number): Promise<boolean> {
    const changed = await this.db.sql(rc).run(this.db.query('roles').where({ tenant_id: role.tenantId, name: role.name, version }).update({
      description: role.description, policies: JSON.stringify(role.policies), updated_at: role.updatedAt, version: role.version,
    }));
    return Number(changed) === 1;
  }

  async delete(rc: RequestContext, tenantId: string, name: string): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('roles').where({ tenant_id: tenantId, name }).delete())) === 1;
  }

  /** Whether an unrevoked API token of the tenant holds the role (an expired one no longer does). */
  async heldByToken(rc: RequestContext, tenantId: string, name: string, now: string): Promise<boolean> {
    const rows = await this.db.sql(rc).rows<{ id: string }>(
      'SELECT id FROM api_tokens WHERE tenant_id = ? AND role = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) LIMIT 1',
      [tenantId, name, now]);
    return rows.length > 0;
  }
}
