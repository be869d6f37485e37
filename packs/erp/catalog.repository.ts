import { newId, type PackContext, type RequestContext } from '../../core/pack-api.js';

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
}

function toMovement(row: MovementRow): StockMovement {
  return {
    id: row.id, productId: row.product_id, delta: Number(row.delta), reason: row.reason, orderId: row.order_id,
    note: row.note, stockAfter: Number(row.stock_after), createdAt: row.created_at,
  };
}
