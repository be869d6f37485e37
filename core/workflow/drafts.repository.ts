import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

/** Why a scheduled publish failed (kept until the draft's next save). */
export interface DraftError {
  code: string;
  message: string;
  details?: Array<{ path: string; message: string }>;
}

/** A record's draft (CONTRACT.md 17.1), as stored. */
export interface StoredDraft {
  namespace: string;
  schema: string;
  id: string;
  /** The whole document the draft would make, without server fields. */
  data: Record<string, unknown>;
  baseVersion: number;
  revision: number;
  createdAt: string;
  updatedAt: string;
  updatedBy: string;
  scheduledAt: string | null;
  lastError: DraftError | null;
  releaseId: string | null;
}

interface DraftRow {
  tenant_id: string;
  namespace: string;
  schema_name: string;
  record_id: string;
  data: string;
  base_version: number | string;
  revision: number | string;
  created_at: string;
  updated_at: string;
  updated_by: string;
  scheduled_at: string | null;
  last_error: string | null;
  release_id: string | null;
}

/** A draft's key: the tenant comes from rc. */
export interface DraftKey {
  namespace: string;
  schema: string;
  id: string;
}

const toDraft = (r: DraftRow): StoredDraft => ({
  namespace: r.namespace,
  schema: r.schema_name,
  id: r.record_id,
  data: JSON.parse(r.data) as Record<string, unknown>,
  baseVersion: Number(r.base_version),
  revision: Number(r.revision),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  updatedBy: r.updated_by,
  scheduledAt: r.scheduled_at,
  lastError: r.last_error ? (JSON.parse(r.last_error) as DraftError) : null,
  releaseId: r.release_id,
});

/** The record_drafts table: one row per draft, keyed by tenant, schema and record id. */
export class DraftsRepository {
  constructor(private readonly db: Database) {}

  private where(rc: RequestContext, key: DraftKey) {
    return { tenant_id: rc.tenantId!, namespace: key.namespace, schema_name: key.schema, record_id: key.id };
  }

  /** The draft, or null; `lock` holds its row for rc's transaction (PostgreSQL). */
  async find(rc: RequestContext, key: DraftKey, lock = false): Promise<StoredDraft | null> {
    const query = this.db.query<DraftRow>('record_drafts').where(this.where(rc, key)).first();
    if (lock && this.db.dialect.name === 'postgres') query.forUpdate();
    const row = (await this.db.sql(rc).run(query)) as DraftRow | undefined;
    return row ? toDraft(row) : null;
  }

  /**
   * The drafts bound to a release, keyed `namespace.schema.id`, in one statement (a release's publish); `lock`
   * holds their rows for rc's transaction (PostgreSQL; SQLite's write transaction is the database's alone).
   */
  async findInRelease(rc: RequestContext, releaseId: string, lock = false): Promise<Map<string, StoredDraft>> {
    const query = this.db.query<DraftRow>('record_drafts').where({ tenant_id: rc.tenantId!, release_id: releaseId });
    if (lock && this.db.dialect.name === 'postgres') query.forUpdate();
    const rows = (await this.db.sql(rc).run(query)) as DraftRow[];
    return new Map(rows.map((r) => [`${r.namespace}.${r.schema_name}.${r.record_id}`, toDraft(r)]));
  }

  /** Removes the drafts bound to a release (its publish, in the transaction that read them locked); how many. */
  async takeRelease(rc: RequestContext, releaseId: string): Promise<number> {
    return Number(await this.db.sql(rc).run(this.db.query('record_drafts').where({ tenant_id: rc.tenantId!, release_id: releaseId }).delete()));
  }

  /** The drafts of some records of one schema (a list page's), by id. */
  async findMany(rc: RequestContext, namespace: string, schema: string, ids: string[]): Promise<Map<string, StoredDraft>> {
    if (!ids.length) return new Map();
    const rows = await this.db.sql(rc).run(this.db.query<DraftRow>('record_drafts')
      .where({ tenant_id: rc.tenantId!, namespace, schema_name: schema }).whereIn('record_id', ids));
    return new Map(rows.map((r) => [r.record_id, toDraft(r)]));
  }

  /** A page of a schema's drafts, newest save first; `limit + 1` rows tell whether more follow. */
  async list(rc: RequestContext, namespace: string, schema: string, limit: number, offset: number): Promise<StoredDraft[]> {
    const rows = await this.db.sql(rc).run(this.db.query<DraftRow>('record_drafts')
      .where({ tenant_id: rc.tenantId!, namespace, schema_name: schema })
      .orderBy([{ column: 'updated_at', order: 'desc' }, { column: 'record_id', order: 'desc' }]).limit(limit + 1).offset(offset));
    return rows.map(toDraft);
  }

  async count(rc: RequestContext, namespace: string, schema: string): Promise<number> {
    const [row] = await this.db.sql(rc).run(this.db.query('record_drafts')
      .where({ tenant_id: rc.tenantId!, namespace, schema_name: schema }).count({ n: '*' }));
    return Number((row as { n: number | string }).n);
  }

  /** Inserts a record's first draft; a draft saved meanwhile makes the unique key answer 409 conflict. */
  async insert(rc: RequestContext, draft: StoredDraft): Promise<void> {
    await this.db.sql(rc).run(this.db.query('record_drafts').insert({
      ...this.where(rc, draft), data: JSON.stringify(draft.data), base_version: draft.baseVersion, revision: draft.revision,
      created_at: draft.createdAt, updated_at: draft.updatedAt, updated_by: draft.updatedBy, scheduled_at: draft.scheduledAt,
      last_error: null, release_id: draft.releaseId,
    }));
  }

  /** Saves a draft over the revision read (`revision - 1`): false when another save came first. Clears lastError. */
  async save(rc: RequestContext, draft: StoredDraft): Promise<boolean> {
    const changed = await this.db.sql(rc).run(this.db.query('record_drafts').where({ ...this.where(rc, draft), revision: draft.revision - 1 }).update({
      data: JSON.stringify(draft.data), base_version: draft.baseVersion, revision: draft.revision, updated_at: draft.updatedAt,
      updated_by: draft.updatedBy, last_error: null,
    }));
    return Number(changed) === 1;
  }

  /** Removes the draft; false when there was none. */
  async delete(rc: RequestContext, key: DraftKey): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('record_drafts').where(this.where(rc, key)).delete())) === 1;
  }

  /** Removes the draft if it is still the revision read (a publish): false when it changed or went meanwhile. */
  async take(rc: RequestContext, key: DraftKey, revision: number): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('record_drafts').where({ ...this.where(rc, key), revision }).delete())) === 1;
  }

  /** Sets or clears the scheduled publish; false when there is no draft. */
  async schedule(rc: RequestContext, key: DraftKey, at: string | null): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('record_drafts').where(this.where(rc, key)).update({ scheduled_at: at }))) === 1;
  }

  /** A scheduled publish that failed: unscheduled, with its error, unless the draft was saved since. */
  async fail(rc: RequestContext, key: DraftKey, revision: number, error: DraftError): Promise<void> {
    await this.db.sql(rc).run(this.db.query('record_drafts').where({ ...this.where(rc, key), revision })
      .update({ scheduled_at: null, last_error: JSON.stringify(error) }));
  }

  /** Drafts of every tenant whose scheduled publish is due, oldest first. */
  async due(now: string, limit: number): Promise<Array<DraftKey & { tenantId: string; scheduledAt: string }>> {
    const rows = await this.db.sql(null).run(this.db.query<DraftRow>('record_drafts')
      .whereNotNull('scheduled_at').where('scheduled_at', '<=', now).orderBy('scheduled_at').limit(limit));
    return rows.map((r) => ({ tenantId: r.tenant_id, namespace: r.namespace, schema: r.schema_name, id: r.record_id, scheduledAt: r.scheduled_at! }));
  }

  /**
   * Claims a due scheduled publish for this process: the scheduled time is cleared where it is still the one read,
   * so of several processes exactly one goes on (the row's update is the database's decision). In the publishing
   * transaction, so a publish that fails leaves it scheduled... unless the caller records the failure.
   */
  async claim(rc: RequestContext, key: DraftKey, scheduledAt: string): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('record_drafts').where({ ...this.where(rc, key), scheduled_at: scheduledAt })
      .update({ scheduled_at: null }))) === 1;
  }

  /** Binds or unbinds (null) a draft to a release. */
  async bind(rc: RequestContext, key: DraftKey, releaseId: string | null): Promise<boolean> {
    return Number(await this.db.sql(rc).run(this.db.query('record_drafts').where(this.where(rc, key)).update({ release_id: releaseId }))) === 1;
  }
}
