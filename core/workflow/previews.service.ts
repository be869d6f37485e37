import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import { NotFound, ValidationFailed } from '../base/errors.js';
import { newId, nowIso, UUID_PATTERN } from '../base/ids.js';
import { systemContext, type PreviewOverlay, type RequestContext } from '../base/request-context.js';
import type { RecordsService } from '../data/records.service.js';
import { itemOf, type DraftsService } from './drafts.service.js';
import type { ReleasesService } from './releases.service.js';

/** A record a preview shows. */
interface PreviewItem {
  namespace: string;
  schema: string;
  id: string;
}

interface PreviewRow {
  tenant_id: string;
  id: string;
  token_hash: string;
  release_id: string | null;
  items: string | null;
  expires_at: string;
  created_at: string;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Previews (CONTRACT.md 17.3): a token (256 random bits, kept as its hash) that shows a release's drafts, or some
 * records' drafts, on the public runtime, the storefront and the public MCP: the route pipeline resolves it for a
 * public request of its tenant (`rc.preview`), and the records service's reads show those drafts in place of the
 * live records. Knowledge search ignores previews.
 */
export class PreviewsService {
  constructor(
    private readonly db: Database,
    private readonly drafts: DraftsService,
    private readonly releases: ReleasesService,
    private readonly records: RecordsService,
  ) {}

  /** POST /previews: `{ id, token, expiresAt }`, the token shown this once. */
  async create(rc: RequestContext, input: { releaseId?: string; items?: PreviewItem[]; expiresInMinutes?: number }): Promise<{ id: string; token: string; expiresAt: string }> {
    if ((input.releaseId === undefined) === (input.items === undefined)) {
      throw ValidationFailed('A preview shows a release or some items', [{ path: '/', message: 'must have either releaseId or items' }]);
    }
    if (input.releaseId !== undefined) await this.releases.get(rc, input.releaseId);
    for (const item of input.items ?? []) await this.drafts.schemaOf(rc, item.namespace, item.schema);
    const token = randomBytes(32).toString('base64url');
    const id = newId();
    const expiresAt = new Date(Date.now() + (input.expiresInMinutes ?? 60) * 60_000).toISOString();
    await this.db.sql(rc).run(this.db.query('previews').insert({
      tenant_id: rc.tenantId!, id, token_hash: hashOf(token), release_id: input.releaseId ?? null,
      items: input.items ? JSON.stringify(input.items.map(({ namespace, schema, id }) => ({ namespace, schema, id }))) : null, expires_at: expiresAt, created_at: nowIso(),
    }));
    return { id, token, expiresAt };
  }

  /** DELETE /previews/{id}. */
  async revoke(rc: RequestContext, id: string): Promise<void> {
    const deleted = UUID_PATTERN.test(id) ? Number(await this.db.sql(rc).run(this.db.query('previews').where({ tenant_id: rc.tenantId!, id }).delete())) : 0;
    if (deleted !== 1) throw NotFound(`No preview "${id.slice(0, 40)}"`);
  }

  /** The overlay of a token for a public request of `tenantId`; 404 not_found for an unknown, expired or other tenant's token. */
  async resolve(tenantId: string, token: string): Promise<PreviewOverlay> {
    const rows = await this.db.sql(null).run(this.db.query<PreviewRow>('previews').where({ token_hash: hashOf(token), tenant_id: tenantId }));
    const row = rows[0];
    if (!row || row.expires_at <= nowIso()) throw NotFound('No such preview, or it has expired');
    const rc = systemContext(tenantId);
    const items: PreviewItem[] = row.release_id
      ? (await this.releases.repository.find(rc, row.release_id))?.items ?? []
      : JSON.parse(row.items ?? '[]') as PreviewItem[];
    const bySchema = new Map<string, Promise<ReadonlyMap<string, Record<string, unknown>>>>();
    return {
      recordsOf: (namespace, schema) => {
        const key = `${namespace}.${schema}`;
        let found = bySchema.get(key);
        if (!found) {
          found = this.load(rc, namespace, schema, items.filter((i) => i.namespace === namespace && i.schema === schema).map((i) => i.id), row.release_id);
          bySchema.set(key, found);
        }
        return found;
      },
    };
  }

  /** The drafts of some records of one schema as records (a release's: only those still bound to it). */
  private async load(rc: RequestContext, namespace: string, schema: string, ids: string[], releaseId: string | null): Promise<ReadonlyMap<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    if (!ids.length) return out;
    for (const draft of (await this.drafts.repository.findMany(rc, namespace, schema, ids)).values()) {
      if (releaseId !== null && draft.releaseId !== releaseId) continue;
      const live = draft.baseVersion ? await this.records.repository.findById(rc, await this.drafts.schemaOf(rc, namespace, schema), draft.id) : null;
      out.set(draft.id, itemOf(draft, live));
    }
    return out;
  }
}
