import { Conflict, type PackContext, type RequestContext } from '../../core/pack-api.js';

/** The invoice of this tenant whose `field` equals `value`, if any (read in rc's transaction). */
export async function findInvoiceBy(pack: PackContext, rc: RequestContext, field: 'number' | 'dealId', value: string) {
  const page = await pack.records.list(rc, 'erp', 'invoice', { [`filter[${field}]`]: value, limit: '1', count: 'false' });
  return page.items[0] ?? null;
}

/**
 * 409 conflict naming the path when another invoice of the tenant has the same value. The unique index
 * on the field is the backstop for two writes racing past this check.
 */
export async function assertUniqueInvoice(pack: PackContext, rc: RequestContext, id: string, field: 'number' | 'dealId', value: unknown): Promise<void> {
  if (typeof value !== 'string') return;
  const other = await findInvoiceBy(pack, rc, field, value);
  if (other && other.id !== id) {
    throw Conflict(`Another invoice has ${field} "${value.slice(0, 64)}"`, [{ path: `/${field}`, message: 'must be unique for the tenant' }]);
  }
}
