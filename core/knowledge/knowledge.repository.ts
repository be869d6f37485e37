import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

export interface KnowledgeRow {
  id: string;
  title: string;
  content: string;
  sourceModule: string;
  sourceRef: string;
  url: string | null;
  /** The locale of a localised source's entry (CONTRACT.md 17.2), null for sources without one. */
  locale: string | null;
  chunkNo: number;
  createdAt: string;
  updatedAt: string;
}

export interface KnowledgeHit {
  id: string;
  title: string;
  /** Highlighted passage with the matches between HIGHLIGHT.start and HIGHLIGHT.stop. */
  snippet: string;
  url: string | null;
  sourceModule: string;
  locale: string | null;
  score: number;
}

/** Private-use characters that mark matches in snippets; the service turns them into <mark> after escaping. */
export const HIGHLIGHT = { start: '\uE000', stop: '\uE001' };

interface SearchSql {
  search(db: Database, rc: RequestContext, terms: string[], limit: number, offset: number, locale: string | null): Promise<{ hits: KnowledgeHit[]; total: number }>;
}

/** SQLite: the external-content FTS5 table joined to its entries by rowid, ranked by bm25 (title weighs 5x). */
const sqliteSearch: SearchSql = {
  async search(db, rc, terms, limit, offset, locale) {
    const match = terms.map((t, i) => `"${t}"${i === terms.length - 1 ? '*' : ''}`).join(' ');
    const conn = db.sql(rc);
    const from = `FROM knowledge_fts JOIN knowledge_entries e ON e.rowid = knowledge_fts.rowid WHERE knowledge_fts MATCH ? AND e.tenant_id = ?${locale === null ? '' : ' AND e.locale = ?'}`;
    const where = locale === null ? [match, rc.tenantId] : [match, rc.tenantId, locale];
    const rows = await conn.rows<HitRow & { rank: number }>(
      `SELECT e.id, e.title, e.url, e.source_module, e.locale, snippet(knowledge_fts, 1, ?, ?, '…', 24) AS snippet, bm25(knowledge_fts, 5.0, 1.0) AS rank
       ${from} ORDER BY rank, e.id LIMIT ? OFFSET ?`,
      [HIGHLIGHT.start, HIGHLIGHT.stop, ...where, limit, offset],
    );
    const total = knownTotal(rows.length, limit, offset)
      ?? Number((await conn.rows<{ n: number }>(`SELECT count(*) AS n ${from}`, where))[0]?.n ?? 0);
    return {
      hits: rows.map((r) => hitOf(r, -r.rank)),
      total,
    };
  },
};

/** PostgreSQL: the generated tsvector column (GIN index), ranked by ts_rank, highlighted by ts_headline. */
const postgresSearch: SearchSql = {
  async search(db, rc, terms, limit, offset, locale) {
    const query = terms.map((t, i) => `${t}${i === terms.length - 1 ? ':*' : ''}`).join(' & ');
    const options = `StartSel=${HIGHLIGHT.start}, StopSel=${HIGHLIGHT.stop}, MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`;
    // On a small table the planner under-prices `@@` and scans every row (30 ms at 10,000 entries instead of
    // 2 ms through the GIN index); outside a caller's transaction the search runs in its own with seq scans off.
    if (!rc.trx) return db.transaction(rc, async (rc) => {
      await db.sql(rc).run(db.query.raw('SET LOCAL enable_seqscan = off'));
      return postgresSearch.search(db, rc, terms, limit, offset, locale);
    });
    const conn = db.sql(rc);
    // Rank first, then headline only the page of hits (ts_headline re-parses the text, so it is the costly part).
    // The tsquery is written inline (not joined from a CTE) so that the planner can use the GIN index.
    const inLocale = locale === null ? '' : ' AND e.locale = ?';
    const localeBinding = locale === null ? [] : [locale];
    const rows = await conn.rows<HitRow & { rank: number; total: string }>(
      `WITH hits AS (
         SELECT e.id, e.title, e.url, e.source_module, e.locale, e.content, ts_rank(e.search, to_tsquery('simple', ?)) AS rank,
                count(*) OVER () AS total
         FROM knowledge_entries e
         WHERE e.tenant_id = ? AND e.search @@ to_tsquery('simple', ?)${inLocale}
         ORDER BY rank DESC, e.id LIMIT ? OFFSET ?)
       SELECT id, title, url, source_module, locale, rank, total, ts_headline('simple', content, to_tsquery('simple', ?), ?) AS snippet
       FROM hits ORDER BY rank DESC, id`,
      [query, rc.tenantId, query, ...localeBinding, limit, offset, query, options],
    );
    // The window count comes with the ranked rows (ranking reads every match anyway); count apart only past the end.
    const total = rows.length ? Number(rows[0]!.total) : knownTotal(rows.length, limit, offset)
      ?? Number((await conn.rows<{ n: string }>(
        `SELECT count(*) AS n FROM knowledge_entries e WHERE e.tenant_id = ? AND e.search @@ to_tsquery('simple', ?)${inLocale}`, [rc.tenantId, query, ...localeBinding],
      ))[0]?.n ?? 0);
    return {
      hits: rows.map((r) => hitOf(r, Number(r.rank))),
      total,
    };
  },
};

/** A hit as the search's statement reads it. */
interface HitRow {
  id: string;
  title: string;
  url: string | null;
  source_module: string;
  locale: string | null;
  snippet: string;
}

function hitOf(r: HitRow, score: number): KnowledgeHit {
  return { id: r.id, title: r.title, snippet: r.snippet, url: r.url, sourceModule: r.source_module, locale: r.locale ?? null, score: round(score) };
}

/** The total without counting when the page is the last one (fewer rows than the limit). */
function knownTotal(rows: number, limit: number, offset: number): number | null {
  return rows < limit && (rows > 0 || offset === 0) ? offset + rows : null;
}

function round(n: number): number {
  return Number(n.toPrecision(6));
}

/** SQL of the knowledge store. Every query is led by the tenant. */
export class KnowledgeRepository {
  private readonly searchSql: SearchSql;

  constructor(private readonly db: Database) {
    this.searchSql = db.dialect.name === 'postgres' ? postgresSearch : sqliteSearch;
  }

  async insertMany(rc: RequestContext, rows: KnowledgeRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.sql(rc).run(this.db.query('knowledge_entries').insert(rows.map((r) => ({
      tenant_id: rc.tenantId!, id: r.id, title: r.title, content: r.content, source_module: r.sourceModule,
      source_ref: r.sourceRef, url: r.url, locale: r.locale, chunk_no: r.chunkNo, created_at: r.createdAt, updated_at: r.updatedAt,
    }))));
  }

  /** The creation time of a source's first chunk (kept across re-indexing), or null. */
  async sourceCreatedAt(rc: RequestContext, sourceModule: string, sourceRef: string): Promise<string | null> {
    const row = await this.db.sql(rc).run(this.db.query('knowledge_entries')
      .where({ tenant_id: rc.tenantId!, source_module: sourceModule, source_ref: sourceRef })
      .min<{ created_at: string | null }>('created_at as created_at').first());
    return row?.created_at ?? null;
  }

  /** Removes a source's entries: of one locale when `locale` is given, else all of them. */
  async deleteSource(rc: RequestContext, sourceModule: string, sourceRef: string, locale?: string): Promise<number> {
    const entries = this.db.query('knowledge_entries').where({ tenant_id: rc.tenantId!, source_module: sourceModule, source_ref: sourceRef });
    return this.db.sql(rc).run((locale === undefined ? entries : entries.where({ locale })).delete());
  }

  async countForTenant(rc: RequestContext): Promise<number> {
    const row = await this.db.sql(rc).run(this.db.query('knowledge_entries').where({ tenant_id: rc.tenantId! }).count<{ n: number | string }>('* as n').first());
    return Number(row?.n ?? 0);
  }

  search(rc: RequestContext, terms: string[], limit: number, offset: number, locale: string | null = null) {
    return this.searchSql.search(this.db, rc, terms, limit, offset, locale);
  }
}
