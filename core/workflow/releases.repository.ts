import type { Database } from '../db/database.js';
import type { ErrorDetail } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';

export type ReleaseStatus = 'open' | 'scheduled' | 'published' | 'failed' | 'rolled_back';

export interface ReleaseItem {
  id: string;
  namespace: string;
  schema: string;
  /** The live version the publish made (null until published, or when it created nothing). */
  version: number | null;
  /** The live version before the publish: 0 for a record the release created (null until published). */
  previousVersion: number | null;
}

export interface Release {
  id: string;
  name: string;
  description: string;
  status: ReleaseStatus;
  items: ReleaseItem[];
  scheduledAt: string | null;
  publishedAt: string | null;
  errors: ErrorDetail[];
  createdAt: string;
}

interface ReleaseRow {
  tenant_id: string;
  id: string;
  name: string;
  description: string;
  status: ReleaseStatus;
  scheduled_at: string | null;
  published_at: string | null;
  errors: string;
  created_at: string;
}

interface ItemRow {
  tenant_id: string;
  release_id: string;
  record_id: string;
  namespace: string;
  schema_name: string;
  position: number | string;
  previous_version: number | string | null;
  version: number | string | null;
}

const num = (v: number | string | null) => (v === null ? null : Number(v));

/** The releases and release_items tables (CONTRACT.md 17.3). */
export class ReleasesRepository {
  constructor(private readonly db: Database) {}

  private async withItems(rc: RequestContext, rows: ReleaseRow[]): Promise<Release[]> {
    if (!rows.length) return [];
    const items = await this.db.sql(rc).run(this.db.query<ItemRow>('release_items')
      .where({ tenant_id: rc.tenantId! }).whereIn('release_id', rows.map((r) => r.id)).orderBy('position'));
    return rows.map((r) => ({
      id: r.id, name: r.name, description: r.description, status: r.status, scheduledAt: r.scheduled_at, publishedAt: r.published_at,
      errors: JSON.parse(r.errors) as ErrorDetail[], createdAt: r.created_at,
      items: items.filter((i) => i.release_id === r.id).map((i) => ({
        id: i.record_id, namespace: i.namespace, schema: i.schema_name, version: num(i.version), previousVersion: num(i.previous_version),
      })),
    }));
  }

  async insert(rc: RequestContext, release: Release): Promise<void> {
    await this.db.sql(rc).run(this.db.query('releases').insert({
      tenant_id: rc.tenantId!, id: release.id, name: release.name, description: release.description, status: release.status,
      scheduled_at: null, published_at: null, errors: '[]', created_at: release.createdAt,
    }));
  }

  /** The release with its items, or null; `lock` holds its row for rc's transaction (PostgreSQL). */
  async find(rc: RequestContext, id: string, lock = false): Promise<Release | null> {
    const query = this.db.query<ReleaseRow>('releases').where({ tenant_id: rc.tenantId!, id });
    if (lock && this.db.dialect.name === 'postgres') query.forUpdate();
    return (await this.withItems(rc, await this.db.sql(rc).run(query)))[0] ?? null;
  }

  /** A page of the tenant's releases, newest first; `limit + 1` rows tell whether more follow. */
  async list(rc: RequestContext, limit: number, offset: number): Promise<Release[]> {
    const rows = await this.db.sql(rc).run(this.db.query<ReleaseRow>('releases').where({ tenant_id: rc.tenantId! })
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit + 1).offset(offset));
    return this.withItems(rc, rows);
  }

  async count(rc: RequestContext): Promise<number> {
    const [row] = await this.db.sql(rc).run(this.db.query('releases').where({ tenant_id: rc.tenantId! }).count({ n: '*' }));
    return Number((row as { n: number | string }).n);
  }

  async addItem(rc: RequestContext, releaseId: string, item: { id: string; namespace: string; schema: string }, position: number): Promise<void> {
    await this.db.sql(rc).run(this.db.query('release_items').insert({
      tenant_id: rc.tenantId!, release_id: releaseId, record_id: item.id, namespace: item.namespace, schema_name: item.schema, position,
      previous_version: null, version: null,
    }));
  }

  async removeItem(rc: RequestContext, releaseId: string, recordId: string): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('release_items').where({ tenant_id: rc.tenantId!, release_id: releaseId, record_id: recordId }).delete())) === 1;
  }

  /**
   * The items' versions after a publish, one statement per 300 items (`UPDATE … FROM (VALUES …)`, which both
   * engines take; a VALUES list's columns are column1, column2, … in both).
   */
  async setVersions(rc: RequestContext, releaseId: string, items: ReadonlyArray<{ recordId: string; previousVersion: number; version: number }>): Promise<void> {
    for (let i = 0; i < items.length; i += 300) {
      const chunk = items.slice(i, i + 300);
      await this.db.sql(rc).rows(
        `UPDATE release_items SET version = v.column2, previous_version = v.column3 FROM (VALUES ${chunk.map(() => '(?, CAST(? AS INTEGER), CAST(? AS INTEGER))').join(', ')}) AS v`
        + ' WHERE release_items.tenant_id = ? AND release_items.release_id = ? AND release_items.record_id = v.column1',
        [...chunk.flatMap((item) => [item.recordId, item.version, item.previousVersion]), rc.tenantId!, releaseId]);
    }
  }

  /** An item's versions (a publish's, a rollback's): one prepared statement per text, run once per item. */
  async setItem(rc: RequestContext, releaseId: string, recordId: string, versions: { previousVersion?: number; version: number | null }): Promise<void> {
    const key = [rc.tenantId!, releaseId, recordId];
    if (versions.previousVersion === undefined) {
      await this.db.sql(rc).rows('UPDATE release_items SET version = ? WHERE tenant_id = ? AND release_id = ? AND record_id = ?', [versions.version, ...key]);
    } else {
      await this.db.sql(rc).rows('UPDATE release_items SET version = ?, previous_version = ? WHERE tenant_id = ? AND release_id = ? AND record_id = ?',
        [versions.version, versions.previousVersion, ...key]);
    }
  }

  async update(rc: RequestContext, id: string, change: { status: ReleaseStatus; scheduledAt?: string | null; publishedAt?: string | null; errors?: ErrorDetail[] }): Promise<void> {
    await this.db.sql(rc).run(this.db.query('releases').where({ tenant_id: rc.tenantId!, id }).update({
      status: change.status,
      ...(change.scheduledAt === undefined ? {} : { scheduled_at: change.scheduledAt }),
      ...(change.publishedAt === undefined ? {} : { published_at: change.publishedAt }),
      ...(change.errors === undefined ? {} : { errors: JSON.stringify(change.errors) }),
    }));
  }

  /** Scheduled releases of every tenant whose time has come, oldest first. */
  async due(now: string, limit: number): Promise<Array<{ tenantId: string; id: string; scheduledAt: string }>> {
    const rows = await this.db.sql(null).run(this.db.query<ReleaseRow>('releases')
      .where({ status: 'scheduled' }).whereNotNull('scheduled_at').where('scheduled_at', '<=', now).orderBy('scheduled_at').limit(limit));
    return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id, scheduledAt: r.scheduled_at! }));
  }

  /**
   * Claims a due scheduled release for this process, in its publishing transaction: the scheduled time is cleared
   * where it is still the one read, so of several processes exactly one goes on.
   */
  async claim(rc: RequestContext, id: string, scheduledAt: string): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('releases').where({ tenant_id: rc.tenantId!, id, status: 'scheduled', scheduled_at: scheduledAt })
      .update({ scheduled_at: null }))) === 1;
  }
}
