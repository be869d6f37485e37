import type { Logger } from 'pino';
import type { Sql } from '../db/sql.js';

export type TenantRole = 'admin' | 'editor' | 'viewer';

export const ROLE_RANK: Record<TenantRole, number> = { viewer: 1, editor: 2, admin: 3 };

/** Who is calling: from a verified JWT, an API token (CONTRACT.md 16.2), or the test key (a superadmin). */
export interface Principal {
  /** `sub` of the JWT, the API token's id, or `test-key`. */
  userId: string;
  email: string | null;
  name: string | null;
  /** The tenant claim of the JWT, if any; an API token's tenant. */
  tenantId: string | null;
  isSuperadmin: boolean;
  /** The strongest tenant role in the token; `viewer` when it names none. */
  role: TenantRole;
  roles: string[];
  /**
   * The custom roles (CONTRACT.md 16.1) the caller holds in the tenant, by name: from a membership, an API token or
   * the JWT's `role:<name>`; the request pipeline keeps those the tenant has. Their policies narrow what the records
   * service reads and writes (core/data/record-policies.ts).
   */
  customRoles?: string[];
  /** The caller holds custom roles and no built-in role: `role` then grants nothing beyond the policies. */
  onlyCustomRoles?: boolean;
  /** How the caller signed in; an API token (`api_token`) is never a superadmin or a member. */
  via: 'jwt' | 'test_key' | 'api_token';
}

/**
 * What every service and repository call takes first: the tenant, the caller and, inside a transaction,
 * the transaction itself. Inside `Database.transaction` use only the inner rc you are given.
 */
export interface RequestContext {
  /** The tenant the request acts for; null for platform-level work. */
  tenantId: string | null;
  principal: Principal | null;
  requestId: string;
  logger?: Logger;
  /** The transaction (Database.transaction), where every statement of the inner rc runs (Database.sql). */
  trx?: Sql;
  /** Registers work to run after the outermost transaction commits (events, in-process handlers). */
  afterCommit?: (cb: () => void | Promise<void>) => void;
  /** Registers work to run when the outermost transaction ends, committed or rolled back (what it held is let go). */
  whenDone?: (cb: () => void) => void;
  /** The schema gates the transaction has passed and holds until it ends (core/metadata/schema-gates.ts). */
  heldGates?: Set<string>;
  /** A preview's drafts, shown by the record reads of a public request in place of the live records (CONTRACT.md 17.3). */
  preview?: PreviewOverlay;
}

/**
 * The drafts a preview token shows (core/workflow/previews.service.ts): the records of one schema as their drafts
 * would make them, by id (draft-only records as if published), limited to the preview's release or items.
 */
export interface PreviewOverlay {
  recordsOf(namespace: string, schema: string): Promise<ReadonlyMap<string, Record<string, unknown>>>;
}

/** A context for work the system does on its own (seeding, background jobs) for one tenant. */
export function systemContext(tenantId: string | null, logger?: Logger): RequestContext {
  return {
    tenantId,
    requestId: 'system',
    logger,
    principal: {
      userId: 'system', email: null, name: null, tenantId, isSuperadmin: true, role: 'admin', roles: ['superadmin'], via: 'test_key',
    },
  };
}
