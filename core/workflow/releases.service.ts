import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { AppError, Conflict, NotFound, ValidationFailed, type ErrorDetail } from '../base/errors.js';
import { newId, nowIso, UUID_PATTERN } from '../base/ids.js';
import { systemContext, type RequestContext } from '../base/request-context.js';
import type { EventsService } from '../events/events.service.js';
import type { Page } from '../http/envelope.js';
import { stripServerFields, type DataRecord, type RecordsService } from '../data/records.service.js';
import { checkFuture, draftErrorOf, overLive, type DraftsService } from './drafts.service.js';
import { ReleasesRepository, type Release, type ReleaseItem, type ReleaseStatus } from './releases.repository.js';

/** A release as the API shows it: its items without their version before. */
export function releaseView(r: Release) {
  return { ...r, items: r.items.map(({ id, namespace, schema, version }) => ({ id, namespace, schema, version })) };
}

/** Releases whose items may still change and which may be published. */
const PENDING: ReadonlySet<ReleaseStatus> = new Set(['open', 'scheduled', 'failed']);
const DUE_BATCH = 20;

/** An item that cannot be published or rolled back, as the 409's details and a failed release's errors name it. */
function itemError(index: number, item: { id: string; namespace: string; schema: string }, code: string, message: string): ErrorDetail {
  return { path: `/items/${index}`, namespace: item.namespace, schema: item.schema, id: item.id, code, message };
}

/**
 * Releases (CONTRACT.md 17.3): drafts of records of any workflow schemas bound together, published all or none in
 * one transaction (now, or at a set time by one process of several), and rolled back to the live versions from
 * before. Every item is written through the one write path (DraftsService.apply, RecordsService), with its own
 * record events; the release's own events go through the outbox with them.
 */
export class ReleasesService {
  readonly repository: ReleasesRepository;

  constructor(
    private readonly db: Database,
    private readonly drafts: DraftsService,
    private readonly records: RecordsService,
    private readonly events: EventsService,
    private readonly logger: Logger,
  ) {
    this.repository = new ReleasesRepository(db);
  }

  async create(rc: RequestContext, input: { name: string; description?: string }): Promise<Release> {
    const release: Release = {
      id: newId(), name: input.name, description: input.description ?? '', status: 'open', items: [], scheduledAt: null, publishedAt: null,
      errors: [], createdAt: nowIso(),
    };
    await this.repository.insert(rc, release);
    return release;
  }

  async list(rc: RequestContext, query: { limit?: number; offset?: number }): Promise<Page<Release>> {
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const rows = await this.repository.list(rc, limit, offset);
    const hasMore = rows.length > limit;
    return {
      items: hasMore ? rows.slice(0, limit) : rows,
      pagination: { limit, offset, total: await this.repository.count(rc), totalEstimated: false, hasMore, nextCursor: null },
    };
  }

  async get(rc: RequestContext, id: string, lock = false): Promise<Release> {
    const release = UUID_PATTERN.test(id) ? await this.repository.find(rc, id, lock) : null;
    if (!release) throw NotFound(`No release "${id.slice(0, 40)}"`);
    return release;
  }

  private async pending(rc: RequestContext, id: string): Promise<Release> {
    const release = await this.get(rc, id, true);
    if (!PENDING.has(release.status)) throw Conflict(`The release is ${release.status}`);
    return release;
  }

  /** Binds a record's current draft (400 without one; 409 when it is in another release). */
  async addItem(rc: RequestContext, id: string, item: { namespace: string; schema: string; id: string }): Promise<Release> {
    await this.drafts.schemaOf(rc, item.namespace, item.schema);
    return this.db.transaction(rc, async (rc) => {
      const release = await this.pending(rc, id);
      if (release.items.some((i) => i.id === item.id)) return release;
      const draft = UUID_PATTERN.test(item.id) ? await this.drafts.repository.find(rc, item, true) : null;
      if (!draft) throw ValidationFailed(`The ${item.namespace}.${item.schema} record "${item.id.slice(0, 40)}" has no draft`, [{ path: '/id', message: 'has no draft' }]);
      if (draft.releaseId !== null && draft.releaseId !== id) throw Conflict(`The draft is in the release ${draft.releaseId}`);
      await this.drafts.repository.bind(rc, item, id);
      await this.repository.addItem(rc, id, item, release.items.length);
      return this.get(rc, id);
    });
  }

  /** Unbinds a record's draft from the release (the draft stays). */
  async removeItem(rc: RequestContext, id: string, recordId: string): Promise<Release> {
    return this.db.transaction(rc, async (rc) => {
      const release = await this.pending(rc, id);
      const item = release.items.find((i) => i.id === recordId);
      if (!item) throw NotFound(`The release has no item "${recordId.slice(0, 40)}"`);
      await this.repository.removeItem(rc, id, recordId);
      const draft = await this.drafts.repository.find(rc, item, true);
      if (draft?.releaseId === id) await this.drafts.repository.bind(rc, item, null);
      return this.get(rc, id);
    });
  }

  /** Publishes every draft of the release now, all or none (409 naming the items that cannot go). */
  async publish(rc: RequestContext, id: string): Promise<Release> {
    return this.db.transaction(rc, async (rc) => this.publishIn(rc, await this.pending(rc, id)));
  }

  async schedule(rc: RequestContext, id: string, at: string): Promise<Release> {
    checkFuture(at);
    return this.db.transaction(rc, async (rc) => {
      await this.pending(rc, id);
      await this.repository.update(rc, id, { status: 'scheduled', scheduledAt: new Date(at).toISOString(), errors: [] });
      return this.get(rc, id);
    });
  }

  async unschedule(rc: RequestContext, id: string): Promise<Release> {
    return this.db.transaction(rc, async (rc) => {
      const release = await this.get(rc, id, true);
      if (release.status !== 'scheduled') throw Conflict(`The release is ${release.status}, not scheduled`);
      await this.repository.update(rc, id, { status: 'open', scheduledAt: null });
      return this.get(rc, id);
    });
  }

  /**
   * In rc's transaction: checks every item first (its draft is the release's, its live record still at the draft's
   * baseVersion, its document valid), then writes them all; any item that cannot go makes the whole publish a 409
   * naming every such item, nothing written.
   */
  private async publishIn(rc: RequestContext, release: Release): Promise<Release> {
    const errors: ErrorDetail[] = [];
    const ready = [];
    // Every bound draft in one statement, locked: no save can change them until the publish commits.
    const drafts = await this.drafts.repository.findInRelease(rc, release.id, true);
    // The live records, locked, one statement per schema (per 500 items): as stored, so that the check sees every
    // locale's values the publish will write, and the writes below need not read them again.
    const lives = new Map<string, DataRecord>();
    for (const [key, items] of groupBySchema(release.items)) {
      const schema = await this.drafts.schemaOf(rc, items[0].namespace, items[0].schema);
      for (const [id, record] of await this.records.repository.findByIds(rc, schema, items.map((i) => i.id), true)) lives.set(`${key}.${id}`, record);
    }
    for (const [index, item] of release.items.entries()) {
      const draft = drafts.get(`${item.namespace}.${item.schema}.${item.id}`);
      if (!draft || draft.releaseId !== release.id) {
        errors.push(itemError(index, item, 'not_found', 'The record has no draft in this release'));
        continue;
      }
      const schema = await this.drafts.schemaOf(rc, item.namespace, item.schema);
      const live = lives.get(`${item.namespace}.${item.schema}.${item.id}`) ?? null;
      const moved = draft.baseVersion === 0 ? (live ? 'The record exists already' : null)
        : !live ? 'The live record was deleted since the draft was made'
          : live.version !== draft.baseVersion ? `The live record moved from version ${draft.baseVersion} to ${live.version} since the draft was made` : null;
      if (moved) {
        errors.push(itemError(index, item, 'conflict', moved));
        continue;
      }
      try {
        this.records.validate(schema, live ? overLive(schema, live, draft.data) : draft.data);
      } catch (err) {
        const e = draftErrorOf(err);
        errors.push(itemError(index, item, e.code, `${e.message}${e.details?.length ? `: ${e.details.map((d) => `${d.path} ${d.message}`).join('; ')}` : ''}`));
        continue;
      }
      ready.push({ index, item, draft, schema, live });
    }
    if (errors.length) throw Conflict(`${errors.length} item(s) of the release cannot be published; nothing was published`, errors);
    // The drafts go in one statement (they are this transaction's, locked), then each is written live.
    if ((await this.drafts.repository.takeRelease(rc, release.id)) !== ready.length) throw Conflict('The release\'s drafts were changed by another request; publish it again');
    const versions = [];
    for (const { index, item, draft, schema, live } of ready) {
      let record: DataRecord;
      try {
        record = await this.drafts.write(rc, schema, draft, { current: live });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        throw Conflict('An item of the release cannot be published; nothing was published', [itemError(index, item, err.code, err.message)]);
      }
      versions.push({ recordId: item.id, previousVersion: draft.baseVersion, version: record.version });
    }
    await this.repository.setVersions(rc, release.id, versions);
    await this.repository.update(rc, release.id, { status: 'published', scheduledAt: null, publishedAt: nowIso(), errors: [] });
    const published = await this.get(rc, release.id);
    await this.announce(rc, 'release.published', published, published.items.map((i) => ({ ...i, version: i.version })));
    return published;
  }

  /**
   * Puts every item back to its live version from before the release, in one transaction, as new versions (a record
   * the release created is deleted): 409 naming the items changed since the publish (deleted ones count), unless `force`.
   */
  async rollback(rc: RequestContext, id: string, force: boolean): Promise<Release> {
    return this.db.transaction(rc, async (rc) => {
      const release = await this.get(rc, id, true);
      if (release.status !== 'published') throw Conflict(`The release is ${release.status}, not published`);
      const lives = await Promise.all(release.items.map((i) => this.records.find(rc, i.namespace, i.schema, i.id)));
      const changed = release.items.flatMap((item, index) => {
        const live = lives[index];
        if (live && live.version === item.version) return [];
        return [itemError(index, item, 'conflict', live ? `Changed since the release was published (version ${item.version} then, ${live.version} now)` : 'Deleted since the release was published')];
      });
      if (changed.length && !force) throw Conflict(`${changed.length} item(s) changed since the release was published; send { "force": true } to roll back anyway`, changed);
      const after: ReleaseItem[] = [];
      for (const [index, item] of release.items.entries()) {
        after.push({ ...item, version: await this.rollBackItem(rc, item, lives[index]) });
      }
      await this.repository.update(rc, id, { status: 'rolled_back' });
      const rolledBack = await this.get(rc, id);
      await this.announce(rc, 'release.rolled_back', rolledBack, after);
      return rolledBack;
    });
  }

  /** One item back to its version before the release, through the one write path; the live version after (null: deleted). */
  private async rollBackItem(rc: RequestContext, item: ReleaseItem, live: DataRecord | null): Promise<number | null> {
    const { namespace, schema, id } = item;
    if (!item.previousVersion) {
      if (live) await this.records.delete(rc, namespace, schema, id);
      return null;
    }
    if (!live) return (await this.records.restore(rc, namespace, schema, id, item.previousVersion)).record.version;
    const revision = await this.records.revisions.find(rc, namespace, schema, id, item.previousVersion);
    if (!revision) throw Conflict(`The revision ${item.previousVersion} of ${namespace}.${schema} record ${id} is no longer kept`);
    const data = stripServerFields(revision.data);
    return (await this.records.publishDocument(rc, namespace, schema, id, live.version, () => data)).version;
  }

  private async announce(rc: RequestContext, name: string, release: Release, items: ReleaseItem[]): Promise<void> {
    await this.events.publish(rc, {
      name,
      payload: { releaseId: release.id, name: release.name, items: items.map(({ namespace, schema, id, version }) => ({ namespace, schema, id, version })) },
    });
  }

  /**
   * Publishes the scheduled releases whose time has come, each claimed by this process in its publishing
   * transaction. One that cannot be published is left `failed` with its errors, nothing of it published.
   */
  async publishDue(now = new Date()): Promise<number> {
    let published = 0;
    for (const due of await this.repository.due(now.toISOString(), DUE_BATCH)) {
      const rc = systemContext(due.tenantId, this.logger);
      let claimed = false;
      try {
        await this.db.transaction(rc, async (rc) => {
          claimed = await this.repository.claim(rc, due.id, due.scheduledAt);
          if (claimed) await this.publishIn(rc, await this.get(rc, due.id, true));
        });
        if (claimed) published++;
      } catch (err) {
        if (!claimed) throw err;
        if (!(err instanceof AppError)) this.logger.error({ err, release: due.id }, 'scheduled release failed');
        const errors = err instanceof AppError && err.details.length ? err.details : [{ path: '/', code: draftErrorOf(err).code, message: draftErrorOf(err).message }];
        await this.repository.update(rc, due.id, { status: 'failed', scheduledAt: null, errors });
      }
    }
    return published;
  }
}

/** A release's items by `namespace.schema`. */
function groupBySchema(items: readonly ReleaseItem[]): Map<string, ReleaseItem[]> {
  const groups = new Map<string, ReleaseItem[]>();
  for (const item of items) {
    const key = `${item.namespace}.${item.schema}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return groups;
}
