import type { Database } from '../db/database.js';
import { actorOf } from '../base/actor.js';
import { AppError, Conflict, Forbidden, InvalidFilter, NotFound, ValidationFailed, type ErrorDetail } from '../base/errors.js';
import { newId, nowIso, UUID_PATTERN } from '../base/ids.js';
import { ROLE_RANK, systemContext, type RequestContext } from '../base/request-context.js';
import type { Logger } from 'pino';
import type { EventsService } from '../events/events.service.js';
import type { Page } from '../http/envelope.js';
import type { CompiledSchema, SchemaRegistry } from '../metadata/schema-registry.js';
import { hasDrafts } from '../metadata/workflow-option.js';
import { applyMergePatch, isPlainObject } from '../data/merge-patch.js';
import { refuseServerFields, stripServerFields, type DataRecord, type RecordQuery, type RecordsService } from '../data/records.service.js';
import { LOCALES_KEY, localize, storedInput, type LocaleChoice } from '../data/locales.js';
import { DraftsRepository, type DraftError, type DraftKey, type StoredDraft } from './drafts.repository.js';

/** A draft as the API shows it beside its record (CONTRACT.md 17.1). */
export interface DraftMeta {
  baseVersion: number;
  revision: number;
  updatedAt: string;
  updatedBy: string;
  scheduledAt: string | null;
  lastError: DraftError | null;
  releaseId: string | null;
}

/** `{ item, draft }`: the record as the draft would make it, and the draft. */
export interface DraftView {
  item: Record<string, unknown>;
  draft: DraftMeta;
}

/** How many due scheduled publishes one pass takes on. */
const DUE_BATCH = 100;

export const metaOf = (d: StoredDraft): DraftMeta => ({
  baseVersion: d.baseVersion, revision: d.revision, updatedAt: d.updatedAt, updatedBy: d.updatedBy,
  scheduledAt: d.scheduledAt, lastError: d.lastError, releaseId: d.releaseId,
});

/** The record a draft would make: its document with the live record's server fields (version 0 for a draft-only record). */
export function itemOf(d: StoredDraft, live: DataRecord | null): Record<string, unknown> {
  return { id: d.id, ...d.data, createdAt: live?.createdAt ?? d.createdAt, updatedAt: d.updatedAt, version: live?.version ?? 0 };
}

/** 403 unless rc's caller is at least an editor of the tenant (lists with drafts). */
function requireEditor(rc: RequestContext): void {
  const p = rc.principal;
  if (p && !p.isSuperadmin && ROLE_RANK[p.role] < ROLE_RANK.editor) throw Forbidden('Drafts are shown to editors and admins');
}

/** An error as a failed publish keeps it. */
export function draftErrorOf(err: unknown): DraftError {
  if (err instanceof AppError) return { code: err.code, message: err.message, ...(err.details.length ? { details: err.details } : {}) };
  return { code: 'internal_error', message: 'The publish failed' };
}

/**
 * Drafts beside the live records of the schemas that ask for them (`workflow.drafts`, CONTRACT.md 17.1): saved,
 * read and discarded here without touching the live record, published through the one write path
 * (RecordsService.publishDocument: events, hooks, revision, knowledge and caches as any update), now or at a set
 * time by one process of several.
 */
export class DraftsService {
  readonly repository: DraftsRepository;

  constructor(
    private readonly db: Database,
    private readonly schemas: SchemaRegistry,
    private readonly records: RecordsService,
    private readonly events: EventsService,
    private readonly logger: Logger,
  ) {
    this.repository = new DraftsRepository(db);
  }

  /** `?locale=` and `?fallback=` of a draft's read or save (RecordsService.chooseLocale). */
  chooseLocale(rc: RequestContext, raw: { locale?: unknown; fallback?: unknown }, options: { all?: boolean } = {}): Promise<LocaleChoice | null> {
    return this.records.chooseLocale(rc, raw, options);
  }

  /** The schema, which must have drafts (404 not_found otherwise). */
  async schemaOf(rc: RequestContext, namespace: string, name: string): Promise<CompiledSchema> {
    const schema = await this.schemas.resolve(rc, namespace, name);
    if (!hasDrafts(schema.workflow)) throw NotFound(`${namespace}.${name} records have no drafts (its schema has no "workflow": { "drafts": true })`);
    return schema;
  }

  /**
   * PUT …/draft: a merge patch over the current draft, else over the live record (its every locale's values).
   * `locale`: the locale whose values of the localised fields the patch sets (CONTRACT.md 17.2); the answer is in it.
   */
  async save(
    rc: RequestContext, namespace: string, name: string, id: string, patch: unknown, options: { rebase?: boolean; locale?: LocaleChoice | null } = {},
  ): Promise<DraftView> {
    const schema = await this.schemaOf(rc, namespace, name);
    if (!isPlainObject(patch)) throw ValidationFailed('The body must be a JSON object (a merge patch)', [{ path: '/', message: 'must be object' }]);
    const stored = storedInput(schema, refuseServerFields(patch), options.locale ?? null, false);
    const key = { namespace, schema: name, id };
    return this.db.transaction(rc, async (rc) => {
      const draft = UUID_PATTERN.test(id) ? await this.repository.find(rc, key, true) : null;
      const live = await this.liveOf(rc, schema, id);
      if (!draft && !live) throw NotFound(`No ${namespace}.${name} record "${id.slice(0, 40)}"`);
      // The fields a draft may not change follow the live record (a product's stock as it is now).
      const base = draft ? (live ? overLive(schema, live, draft.data) : draft.data) : stripServerFields(live!);
      const merged = applyMergePatch(base, stored) as Record<string, unknown>;
      if (live) checkDraftFields(schema, merged, stripServerFields(live));
      const data = this.records.validate(schema, merged);
      const now = nowIso();
      const baseVersion = !draft ? live!.version : options.rebase && live ? live.version : draft.baseVersion;
      const next: StoredDraft = {
        namespace, schema: name, id, data, baseVersion, revision: (draft?.revision ?? 0) + 1, createdAt: draft?.createdAt ?? now,
        updatedAt: now, updatedBy: actorOf(rc).id, scheduledAt: draft?.scheduledAt ?? null, lastError: null, releaseId: draft?.releaseId ?? null,
      };
      if (!draft) await this.repository.insert(rc, next);
      else if (!(await this.repository.save(rc, next))) throw Conflict('The draft was saved by another request; read it again and retry');
      return this.saved(rc, schema, next, live, options.locale ?? null);
    });
  }

  /** The live record as stored (every locale's values), or null (a draft-only record, an id that is no UUID). */
  private liveOf(rc: RequestContext, schema: CompiledSchema, id: string): Promise<DataRecord | null> {
    return UUID_PATTERN.test(id) ? this.records.repository.findById(rc, schema, id) : Promise.resolve(null);
  }

  /** POST /data/{ns}/{schema}?draft=true: a record that exists only as a draft until its first publish. */
  async createDraftOnly(rc: RequestContext, namespace: string, name: string, input: unknown, locale: LocaleChoice | null = null): Promise<DraftView> {
    const schema = await this.schemaOf(rc, namespace, name);
    const data = this.records.validate(schema, storedInput(schema, refuseServerFields(input), locale, true));
    const now = nowIso();
    const draft: StoredDraft = {
      namespace, schema: name, id: newId(), data, baseVersion: 0, revision: 1, createdAt: now, updatedAt: now,
      updatedBy: actorOf(rc).id, scheduledAt: null, lastError: null, releaseId: null,
    };
    return this.db.transaction(rc, async (rc) => {
      await this.repository.insert(rc, draft);
      return this.saved(rc, schema, draft, null, locale);
    });
  }

  /**
   * The saved draft's event (`{ns}.{schema}.draft_updated`, in its transaction: its item as stored, every
   * locale's values, as record events carry them) and view (in `locale`).
   */
  private async saved(rc: RequestContext, schema: CompiledSchema, draft: StoredDraft, live: DataRecord | null, locale: LocaleChoice | null): Promise<DraftView> {
    const item = itemOf(draft, live);
    const meta = metaOf(draft);
    await this.events.publish(rc, {
      name: `${draft.namespace}.${draft.schema}.draft_updated`,
      payload: { namespace: draft.namespace, schema: draft.schema, id: draft.id, draft: meta, item },
    });
    return { item: localize(item, schema.localized, locale), draft: meta };
  }

  /** GET …/draft (in `locale`, `*` included): 404 when the record has none. */
  async get(rc: RequestContext, namespace: string, name: string, id: string, locale: LocaleChoice | null = null): Promise<DraftView> {
    const schema = await this.schemaOf(rc, namespace, name);
    const draft = await this.require(rc, { namespace, schema: name, id });
    return { item: localize(itemOf(draft, await this.liveOf(rc, schema, id)), schema.localized, locale), draft: metaOf(draft) };
  }

  /** DELETE …/draft: the draft is discarded (a draft-only record with it). */
  async discard(rc: RequestContext, namespace: string, name: string, id: string): Promise<void> {
    await this.schemaOf(rc, namespace, name);
    const key = { namespace, schema: name, id };
    if (!UUID_PATTERN.test(id) || !(await this.repository.delete(rc, key))) throw NotFound(`No draft of ${namespace}.${name} record "${id.slice(0, 40)}"`);
  }

  private async require(rc: RequestContext, key: DraftKey, lock = false): Promise<StoredDraft> {
    const draft = UUID_PATTERN.test(key.id) ? await this.repository.find(rc, key, lock) : null;
    if (!draft) throw NotFound(`No draft of ${key.namespace}.${key.schema} record "${key.id.slice(0, 40)}"`);
    return draft;
  }

  /** POST …/draft/publish: the draft becomes the live record's next version (or its first), in one transaction. */
  async publish(rc: RequestContext, namespace: string, name: string, id: string, ifMatch: string | null): Promise<DataRecord> {
    const schema = await this.schemaOf(rc, namespace, name);
    return this.db.transaction(rc, async (rc) => {
      const draft = await this.require(rc, { namespace, schema: name, id }, true);
      if (draft.releaseId) throw Conflict(`The draft is bound to the release ${draft.releaseId}; publish the release, or take the draft out of it`);
      return this.apply(rc, schema, draft, ifMatch);
    });
  }

  /**
   * Writes a draft live and removes it, in rc's transaction (also a release's publish): through the one write
   * path, over the live record still at the draft's baseVersion. A schema with `workflow.fields` takes only those
   * fields from the draft; the others are the live record's at the time of the publish.
   */
  async apply(rc: RequestContext, schema: CompiledSchema, draft: StoredDraft, ifMatch: string | null = null): Promise<DataRecord> {
    if (!(await this.repository.take(rc, draft, draft.revision))) throw Conflict('The draft was changed by another request; read it again and retry');
    return this.write(rc, schema, draft, undefined, ifMatch);
  }

  /**
   * `apply` without removing the draft (a release's publish removes its drafts in one statement). `locked`: the
   * live record as rc's transaction read it locked (a release reads its items' at once).
   */
  write(rc: RequestContext, schema: CompiledSchema, draft: StoredDraft, locked?: { current: DataRecord | null }, ifMatch: string | null = null): Promise<DataRecord> {
    return this.records.publishDocument(rc, schema.namespace, schema.name, draft.id, draft.baseVersion, (live) => (live ? overLive(schema, live, draft.data) : draft.data), ifMatch, locked);
  }

  /** POST …/draft/publish `{ at }`: published by the scheduler once `at` has come. */
  async schedule(rc: RequestContext, namespace: string, name: string, id: string, at: string): Promise<DraftView> {
    await this.schemaOf(rc, namespace, name);
    checkFuture(at);
    const key = { namespace, schema: name, id };
    return this.db.transaction(rc, async (rc) => {
      const draft = await this.require(rc, key, true);
      if (draft.releaseId) throw Conflict(`The draft is bound to the release ${draft.releaseId}; schedule the release instead`);
      await this.repository.schedule(rc, key, new Date(at).toISOString());
      return this.get(rc, namespace, name, id);
    });
  }

  /** DELETE …/draft/schedule. */
  async unschedule(rc: RequestContext, namespace: string, name: string, id: string): Promise<DraftView> {
    await this.schemaOf(rc, namespace, name);
    const key = { namespace, schema: name, id };
    if (!UUID_PATTERN.test(id) || !(await this.repository.schedule(rc, key, null))) throw NotFound(`No draft of ${namespace}.${name} record "${id.slice(0, 40)}"`);
    return this.get(rc, namespace, name, id);
  }

  /**
   * Publishes the drafts whose time has come, each claimed by this process in its publishing transaction (of
   * several processes one publishes it, once). A publish that fails unschedules the draft with its error.
   * Resolves with how many were published.
   */
  async publishDue(now = new Date()): Promise<number> {
    let published = 0;
    for (const due of await this.repository.due(now.toISOString(), DUE_BATCH)) {
      const rc = systemContext(due.tenantId, this.logger);
      let revision: number | null = null;
      try {
        const done = await this.db.transaction(rc, async (rc) => {
          if (!(await this.repository.claim(rc, due, due.scheduledAt))) return false;
          const draft = await this.require(rc, due, true);
          revision = draft.revision;
          await this.apply(rc, await this.schemas.resolve(rc, due.namespace, due.schema), draft);
          return true;
        });
        if (done) published++;
      } catch (err) {
        if (!(err instanceof AppError)) this.logger.error({ err, draft: due }, 'scheduled publish failed');
        if (revision !== null) await this.repository.fail(rc, due, revision, draftErrorOf(err));
      }
    }
    return published;
  }

  /** GET /data/{ns}/{schema}?drafts=include|only (editors): live records with their drafts, or the drafts alone. */
  async list(
    rc: RequestContext, namespace: string, name: string, mode: unknown, query: RecordQuery, locale: LocaleChoice | null = null,
  ): Promise<Page<Record<string, unknown>>> {
    if (mode !== 'include' && mode !== 'only') throw ValidationFailed('drafts must be include or only', [{ path: 'query/drafts', message: 'must be include or only' }]);
    requireEditor(rc);
    const schema = await this.schemaOf(rc, namespace, name);
    if (mode === 'include') {
      const page = await this.records.list(rc, namespace, name, query, { locale });
      const drafts = await this.repository.findMany(rc, namespace, name, page.items.map((i) => String(i.id)));
      const items = page.items.map((item) => {
        const draft = drafts.get(String(item.id));
        if (!draft) return { ...item, hasDraft: false };
        const merged = localize(itemOf(draft, item as DataRecord), schema.localized, locale);
        return { ...(query.fields ? project(merged, ['id', ...query.fields]) : merged), hasDraft: true };
      });
      return { items, pagination: page.pagination };
    }
    if (query.filter?.length || query.sort?.length || query.cursor || query.expand?.length) {
      throw InvalidFilter('drafts=only takes limit, offset, fields and count (the newest saved draft first)');
    }
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const rows = await this.repository.list(rc, namespace, name, limit, offset);
    const hasMore = rows.length > limit;
    const page = hasMore ? rows.slice(0, limit) : rows;
    const live = await Promise.all(page.map((d) => (d.baseVersion ? this.records.find(rc, namespace, name, d.id) : null)));
    const items = page.map((d, i) => {
      const merged = localize(itemOf(d, live[i]), schema.localized, locale);
      return { ...(query.fields ? project(merged, ['id', ...query.fields]) : merged), hasDraft: true, draft: metaOf(d) };
    });
    const total = query.count === false ? null : await this.repository.count(rc, namespace, name);
    return { items, pagination: { limit, offset, total, totalEstimated: false, hasMore, nextCursor: null } };
  }
}

function project(record: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => Object.hasOwn(record, f)).map((f) => [f, record[f]]));
}

/** A draft's document with the fields it may not change (`workflow.fields`) as the live record has them. */
export function overLive(schema: CompiledSchema, live: DataRecord, data: Record<string, unknown>): Record<string, unknown> {
  const fields = schema.workflow?.fields;
  if (!fields) return data;
  const document = stripServerFields(live);
  for (const field of fields) {
    if (Object.hasOwn(data, field)) document[field] = data[field];
    else delete document[field];
  }
  // The other locales' values (17.2): the draft's of the fields it may change, the live record's of the others.
  const translations: Record<string, Record<string, unknown>> = {};
  for (const [from, fieldsOf] of [[live, (f: string) => !fields.includes(f)], [data, (f: string) => fields.includes(f)]] as const) {
    for (const [locale, values] of Object.entries(translationsOf(from))) {
      for (const [field, value] of Object.entries(values)) if (fieldsOf(field)) (translations[locale] ??= {})[field] = value;
    }
  }
  delete document[LOCALES_KEY];
  if (Object.keys(translations).length) document[LOCALES_KEY] = translations;
  return document;
}

/** A stored document's other locales' values (`$locales`), {} when none. */
function translationsOf(document: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const stored = document[LOCALES_KEY];
  return isPlainObject(stored) ? (stored as Record<string, Record<string, unknown>>) : {};
}

/** An `at` in the future, else 400 at `/at`. */
export function checkFuture(at: string): void {
  const time = Date.parse(at);
  if (Number.isNaN(time) || time <= Date.now()) throw ValidationFailed('at must be a time in the future', [{ path: '/at', message: 'must be a date-time in the future' }]);
}

/** With `workflow.fields`, a draft changes only those fields of the live record (400 at the path of any other). */
function checkDraftFields(schema: CompiledSchema, draft: Record<string, unknown>, live: Record<string, unknown>): void {
  const allowed = schema.workflow?.fields;
  if (!allowed) return;
  const issues: ErrorDetail[] = [];
  const changed = new Set<string>();
  for (const field of new Set([...Object.keys(draft), ...Object.keys(live)])) {
    if (field !== LOCALES_KEY && !allowed.includes(field) && JSON.stringify(draft[field]) !== JSON.stringify(live[field])) changed.add(field);
  }
  // Another locale's value of a field the draft may not change is that field's change too.
  const [ours, theirs] = [translationsOf(draft), translationsOf(live)];
  for (const locale of new Set([...Object.keys(ours), ...Object.keys(theirs)])) {
    for (const field of new Set([...Object.keys(ours[locale] ?? {}), ...Object.keys(theirs[locale] ?? {})])) {
      if (!allowed.includes(field) && JSON.stringify(ours[locale]?.[field]) !== JSON.stringify(theirs[locale]?.[field])) changed.add(field);
    }
  }
  for (const field of changed) issues.push({ path: `/${field}`, message: 'cannot be changed through a draft' });
  if (issues.length) throw ValidationFailed(`A draft of ${schema.namespace}.${schema.name} changes only ${allowed.join(', ')}`, issues);
}
