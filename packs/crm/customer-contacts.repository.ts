import type { PackContext, RequestContext } from '../../core/pack-api.js';

export interface CustomerContact {
  customerRef: string;
  email: string;
  cartReminders: boolean;
  updatedAt: string;
}

interface ContactRow {
  customer_ref: string;
  email: string;
  cart_reminders: boolean | number;
  updated_at: string;
}

/** SQL of crm_customer_contacts (packs/crm/migrations/0503-crm-customer-contacts.ts). */
export class CustomerContactsRepository {
  constructor(private readonly db: PackContext['db']) {}

  async find(rc: RequestContext, customerRef: string): Promise<CustomerContact | null> {
    const rows = await this.db.sql(rc).rows<ContactRow>(
      'SELECT customer_ref, email, cart_reminders, updated_at FROM crm_customer_contacts WHERE tenant_id = ? AND customer_ref = ?',
      [rc.tenantId, customerRef]);
    return rows[0] ? toContact(rows[0]) : null;
  }

  /** Inserts or replaces the customer's contact (one statement, so concurrent writes never fail on the key). */
  async upsert(rc: RequestContext, contact: CustomerContact): Promise<CustomerContact> {
    const rows = await this.db.sql(rc).rows<ContactRow>(
      'INSERT INTO crm_customer_contacts (tenant_id, customer_ref, email, cart_reminders, updated_at) VALUES (?, ?, ?, ?, ?) '
      + 'ON CONFLICT (tenant_id, customer_ref) DO UPDATE SET email = excluded.email, cart_reminders = excluded.cart_reminders, updated_at = excluded.updated_at '
      + 'RETURNING customer_ref, email, cart_reminders, updated_at',
      [rc.tenantId, contact.customerRef, contact.email, contact.cartReminders, contact.updatedAt]);
    return toContact(rows[0]);
  }

  async delete(rc: RequestContext, customerRef: string): Promise<number> {
    return this.db.sql(rc).run(this.db.query('crm_customer_contacts').where({ tenant_id: rc.tenantId, customer_ref: customerRef }).delete());
  }

  /** The contacts of these customers that take cart reminders, by customerRef (one query for a batch). */
  async reminded(rc: RequestContext, customerRefs: string[]): Promise<Map<string, string>> {
    if (!customerRefs.length) return new Map();
    const rows = await this.db.sql(rc).rows<{ customer_ref: string; email: string }>(
      `SELECT customer_ref, email FROM crm_customer_contacts WHERE tenant_id = ? AND customer_ref IN (${customerRefs.map(() => '?').join(', ')}) `
      + 'AND cart_reminders = ?', [rc.tenantId, ...customerRefs, true]);
    return new Map(rows.map((r) => [r.customer_ref, r.email]));
  }
}

function toContact(row: ContactRow): CustomerContact {
  return { customerRef: row.customer_ref, email: row.email, cartReminders: row.cart_reminders === true || row.cart_reminders === 1, updatedAt: row.updated_at };
}
