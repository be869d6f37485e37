
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

interface RecordRowOut {
  id: string;
  data: unknown;
  version: number | string;
  created_at: string;
  updated_at: string;
}

/** SQL of the catalogue: number sequences, the stock ledger and the product look-ups by number and sku. */
export class CatalogRepository {
  constructor(private readonly db: PackContext['db']) {}

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
    return { items: rows.map((r) => this.toRecord(r)), total: Number(count[0].n) };
  }

  private toRecord(row: RecordRowOut): DataRecord {
    return { id: row.id, ...this.db.dialect.fromJson<Record<string, unknown>>(row.data), createdAt: row.created_at, updatedAt: row.updated_at, version: Number(row.version) };
  }
}

function toMovement(row: MovementRow): StockMovement {
  return {
    id: row.id, productId: row.product_id, delta: Number(row.delta), reason: row.reason, orderId: row.order_id,
    note: row.note, stockAfter: Number(row.stock_after), createdAt: row.created_at,
  };
}import { newId, type CompiledSchema, type DataRecord, type PackContext, type RequestContext } from '../../core/pack-api.js';

