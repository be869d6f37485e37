import { UUID_PATTERN, newId, type CompiledSchema, type DataRecord, type Database, type RecordsRepository, type RequestContext } from '../../core/pack-api.js';

export type MovementReason = 'initial' | 'order' | 'cancel' | 'patch' | 'restock' | 'correction' | 'damage' | 'return';

export interface StockMovement {
  id: string;
  productId: string;
  delta: number;
  reason: MovementReason;
  orderId: string | null;
  note: string | null;
  stockAfter: number;
  createdAt: string;
}

interface MovementRow {
  id: string;
  product_id: string;
  delta: number | string;
  reason: MovementReason;
  order_id: string | null;
  note: string | null;
  stock_after: number | string;
  created_at: string;
}

type RecordRowOut = Parameters<RecordsRepository['toRecord']>[0];

/** SQL of the catalogue: number sequences, the stock ledger and the product look-ups by number and sku. */
export class CatalogRepository {
  /** The storefront's statements per record table: findActiveBySku's and versionBySku's. */
  private readonly bySku = new Map<string, { active: string; version: string }>();

  constructor(private readonly db: Database, private readonly records: RecordsRepository) {}

  /**
   * The next number of a per-tenant sequence, decided by one upsert (the row is locked until the
   * transaction ends, so numbers are handed out in commit order and a rolled-back one is handed out again;
   * a committed one never is).
   */
  async nextNumber(rc: RequestContext, name: 'product' | 'order'): Promise<number> {
    const rows = await this.db.sql(rc).rows<{ value: number | string }>(
      'INSERT INTO erp_sequences (tenant_id, name, value) VALUES (?, ?, 1) '
      + 'ON CONFLICT (tenant_id, name) DO UPDATE SET value = erp_sequences.value + 1 RETURNING value', [rc.tenantId!, name]);
    return Number(rows[0].value);
  }

  /** Queues one movement of the ledger (written at commit, with the change it records). */
  async addMovement(rc: RequestContext, m: Omit<StockMovement, 'id'>): Promise<StockMovement> {
    const movement: StockMovement = { id: newId(), ...m };
    await this.db.insertAtCommit(rc, 'erp_stock_movements', {
      tenant_id: rc.tenantId!, id: movement.id, product_id: m.productId, delta: m.delta, reason: m.reason,
      order_id: m.orderId, note: m.note, stock_after: m.stockAfter, created_at: m.createdAt,
    });
    return movement;
  }

  async listMovements(rc: RequestContext, productId: string, limit: number, offset: number): Promise<{ items: StockMovement[]; total: number }> {
    const conn = this.db.sql(rc);
    const [rows, count] = await Promise.all([
      conn.rows<MovementRow>(
        'SELECT id, product_id, delta, reason, order_id, note, stock_after, created_at FROM erp_stock_movements '
        + 'WHERE tenant_id = ? AND product_id = ? ORDER BY id LIMIT ? OFFSET ?', [rc.tenantId!, productId, limit, offset]),
      conn.rows<{ n: number | string }>(
        'SELECT count(*) AS n FROM erp_stock_movements WHERE tenant_id = ? AND product_id = ?', [rc.tenantId!, productId]),
    ]);
    return { items: rows.map(toMovement), total: Number(count[0].n) };
  }

  /** The sum of a product's movements (what its physicalStock must be). */
  async ledgerSum(rc: RequestContext, productId: string): Promise<number> {
    const rows = await this.db.sql(rc).rows<{ n: number | string | null }>(
      'SELECT sum(delta) AS n FROM erp_stock_movements WHERE tenant_id = ? AND product_id = ?', [rc.tenantId!, productId]);
    return Number(rows[0].n ?? 0);
  }

  /** Records (products, orders) by UUID or number, one query for all of them. */
  async findByRefs(rc: RequestContext, schema: CompiledSchema, refs: Array<string | number>): Promise<DataRecord[]> {
    const ids = refs.filter((r): r is string => typeof r === 'string' && UUID_PATTERN.test(r));
    const numbers = refs.filter((r): r is number => typeof r === 'number');
    if (!ids.length && !numbers.length) return [];
    const or: string[] = [];
    if (ids.length) or.push(`id IN (${ids.map(() => '?').join(', ')})`);
    if (numbers.length) or.push(`${this.db.dialect.jsonField('number', 'integer')} IN (${numbers.map(() => '?').join(', ')})`);
    const rows = await this.db.sql(rc).rows<RecordRowOut>(
      `SELECT id, data, version, created_at, updated_at FROM ${schema.tableName} WHERE tenant_id = ? AND (${or.join(' OR ')})`,
      [rc.tenantId!, ...ids, ...numbers]);
    return rows.map((r) => this.records.toRecord(r));
  }

  /**
   * The stored fields, id and version of the active product with this sku (the storefront's read, on the
   * unique sku index): only the columns it needs, its statement made once per table.
   */
  async findActiveBySku(rc: RequestContext, schema: CompiledSchema, sku: string): Promise<(Record<string, unknown> & { id: string; version: number }) | null> {
    const rows = await this.db.sql(rc).rows<{ id: string; data: unknown; version: number | string }>(this.skuStatements(schema).active, [rc.tenantId!, sku]);
    const row = rows[0];
    if (!row) return null;
    const product = this.db.dialect.fromJson<Record<string, unknown> & { id: string; version: number }>(row.data);
    product.id = row.id;
    product.version = Number(row.version);
    return product;
  }

  /**
   * The id and version of the product with this sku, whatever its status: all a storefront needs to know that
   * an answer it rendered before is still the product's (every write raises the version). The sku index and
   * the row's header only: its JSON is not read.
   */
  async versionBySku(rc: RequestContext, schema: CompiledSchema, sku: string): Promise<{ id: string; version: number } | null> {
    const rows = await this.db.sql(rc).rows<{ id: string; version: number | string }>(this.skuStatements(schema).version, [rc.tenantId!, sku]);
    const row = rows[0];
    return row ? { id: row.id, version: Number(row.version) } : null;
  }

  private skuStatements(schema: CompiledSchema): { active: string; version: string } {
    let statements = this.bySku.get(schema.tableName);
    if (statements === undefined) {
      const d = this.db.dialect;
      const bySku = `FROM ${schema.tableName} WHERE tenant_id = ? AND ${d.jsonField('sku', 'string')} = ?`;
      statements = {
        active: `SELECT id, data, version ${bySku} AND ${d.jsonField('status', 'string')} = 'active'`,
        version: `SELECT id, version ${bySku}`,
      };
      this.bySku.set(schema.tableName, statements);
    }
    return statements;
  }

  /** Active products by number: `sku` exact, `q` a case-insensitive substring of name or sku. */
  async listActive(rc: RequestContext, schema: CompiledSchema, query: { sku?: string; q?: string; limit: number; offset: number }): Promise<{ items: DataRecord[]; total: number }> {
    const d = this.db.dialect;
    const where = [`tenant_id = ?`, `${d.jsonField('status', 'string')} = 'active'`];
    const bindings: unknown[] = [rc.tenantId!];
    if (query.sku !== undefined) {
      where.push(`${d.jsonField('sku', 'string')} = ?`);
      bindings.push(query.sku);
    }
    if (query.q !== undefined) {
      const pattern = `%${query.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(`(lower(${d.jsonField('name', 'string')}) LIKE ? ESCAPE '\\' OR lower(${d.jsonField('sku', 'string')}) LIKE ? ESCAPE '\\')`);
      bindings.push(pattern, pattern);
    }
    const conn = this.db.sql(rc);
    const filter = where.join(' AND ');
    const [rows, count] = await Promise.all([
      conn.rows<RecordRowOut>(`SELECT id, data, version, created_at, updated_at FROM ${schema.tableName} WHERE ${filter} `
        + `ORDER BY ${d.jsonField('number', 'integer')} LIMIT ? OFFSET ?`, [...bindings, query.limit, query.offset]),
      conn.rows<{ n: number | string }>(`SELECT count(*) AS n FROM ${schema.tableName} WHERE ${filter}`, bindings),
    ]);
    return { items: rows.map((r) => this.records.toRecord(r)), total: Number(count[0].n) };
  }
}

function toMovement(row: MovementRow): StockMovement {
  return {
    id: row.id, productId: row.product_id, delta: Number(row.delta), reason: row.reason, orderId: row.order_id,
    note: row.note, stockAfter: Number(row.stock_after), createdAt: row.created_at,
  };
}
