import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { newId, nowIso } from '../base/ids.js';
import type { Page } from '../http/envelope.js';
import { TenantRequired } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import { chunkMarkdown, queryTerms } from './knowledge-chunker.js';
import { HIGHLIGHT, KnowledgeRepository, type KnowledgeHit, type KnowledgeRow } from './knowledge.repository.js';

export interface KnowledgeSource {
  /** Who owns the entries: `cms`, `web`, … */
  sourceModule: string;
  /** The owner's reference (a record id, a URL); re-indexing the same reference replaces its entries. */
  sourceRef: string;
  title: string;
  /** Markdown or plain text; split into chunks on headings. */
  content: string;
  url?: string | null;
  /** false keeps the whole content as one entry (one search hit per source, e.g. a blog post). Default true. */
  chunked?: boolean;
  /**
   * The locale of the content (CONTRACT.md 17.2): a source keeps one set of entries per locale, and re-indexing
   * it in a locale replaces that locale's alone. Without one the source's entries are replaced whatever their locale.
   */
  locale?: string;
}

export interface KnowledgeSearchOptions {
  limit?: number;
  offset?: number;
  /** Only entries of this locale; without it every locale's (and those without one). */
  locale?: string | null;
}

export const KNOWLEDGE_LIMITS = { defaultLimit: 10, maxLimit: 50, maxOffset: 1000, maxTitle: 300 };

/**
 * The knowledge store: text chunks per tenant with full-text search (SQLite FTS5, PostgreSQL tsvector),
 * ranked (bm25 / ts_rank) with highlighted snippets. Writes join the caller's transaction, so content
 * published in a transaction is searchable as soon as it commits.
 */
export class KnowledgeService {
  readonly repository: KnowledgeRepository;

  constructor(readonly config: Config, readonly db: Database, readonly logger: Logger) {
    this.repository = new KnowledgeRepository(db);
  }

  /** Replaces the entries of one source with the chunks of `content`; returns the new entries. */
  async upsertForSource(rc: RequestContext, source: KnowledgeSource): Promise<Array<{ id: string; title: string }>> {
    requireTenant(rc);
    const title = source.title.trim().slice(0, KNOWLEDGE_LIMITS.maxTitle) || source.sourceRef.slice(0, KNOWLEDGE_LIMITS.maxTitle);
    const chunks = source.chunked === false
      ? (source.content.trim() ? [{ heading: null, text: source.content.trim() }] : [])
      : chunkMarkdown(source.content);
    if (!chunks.length && title) chunks.push({ heading: null, text: title });
    return this.db.transaction(rc, async (rc) => {
      const now = nowIso();
      const createdAt = (await this.repository.sourceCreatedAt(rc, source.sourceModule, source.sourceRef)) ?? now;
      await this.repository.deleteSource(rc, source.sourceModule, source.sourceRef, source.locale);
      const rows: KnowledgeRow[] = chunks.map((chunk, i) => ({
        id: newId(),
        title: chunk.heading && chunk.heading !== title ? `${title} — ${chunk.heading}`.slice(0, KNOWLEDGE_LIMITS.maxTitle) : title,
        content: chunk.text,
        sourceModule: source.sourceModule,
        sourceRef: source.sourceRef,
        url: source.url ?? null,
        locale: source.locale ?? null,
        chunkNo: i,
        createdAt,
        updatedAt: now,
      }));
      await this.repository.insertMany(rc, rows);
      return rows.map((r) => ({ id: r.id, title: r.title }));
    });
  }

  /** Removes every entry of a source; returns how many were removed. */
  async removeSource(rc: RequestContext, sourceModule: string, sourceRef: string): Promise<number> {
    requireTenant(rc);
    return this.repository.deleteSource(rc, sourceModule, sourceRef);
  }

  /** Ranked full-text search in the tenant's entries; snippets are HTML-escaped with <mark> around matches. */
  async search(rc: RequestContext, q: string, options: KnowledgeSearchOptions = {}): Promise<Page<KnowledgeHit>> {
    requireTenant(rc);
    const limit = clamp(options.limit ?? KNOWLEDGE_LIMITS.defaultLimit, 1, KNOWLEDGE_LIMITS.maxLimit);
    const offset = clamp(options.offset ?? 0, 0, KNOWLEDGE_LIMITS.maxOffset);
    const terms = queryTerms(q);
    if (!terms.length) return { items: [], pagination: { limit, offset, total: 0, hasMore: false, nextCursor: null } };
    const { hits, total } = await this.repository.search(rc, terms, limit, offset, options.locale ?? null);
    const items = hits.map((h) => ({ ...h, snippet: renderSnippet(h.snippet) }));
    return { items, pagination: { limit, offset, total, hasMore: offset + items.length < total, nextCursor: null } };
  }
}

function requireTenant(rc: RequestContext): void {
  if (!rc.tenantId) throw TenantRequired();
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.trunc(n)));
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes the passage for HTML and turns the engine's match markers into <mark> elements. */
export function renderSnippet(raw: string): string {
  return raw
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    .replaceAll(HIGHLIGHT.start, '<mark>')
    .replaceAll(HIGHLIGHT.stop, '</mark>');
}
