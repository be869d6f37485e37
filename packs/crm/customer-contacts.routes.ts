import { NotFound } from '../../core/pack-api.js';
import { customerRefParamOf as customerRef } from './customer-ref.js';
import type { JsonSchema, PackContext, PackRouter } from '../../core/pack-api.js';

const contactBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'cartReminders'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 254, description: 'Where the customer\'s cart reminders go' },
    cartReminders: { type: 'boolean', description: 'The customer agreed to cart reminders by mail (none are sent without it)' },
  },
};

const contactResponse: JsonSchema = {
  type: 'object',
  properties: {
    customerRef: { type: 'string' }, email: { type: 'string' }, cartReminders: { type: 'boolean' }, updatedAt: { type: 'string', format: 'date-time' },
  },
};

/** A customer's contact address for cart reminders: set (editor), read (editor), erase (admin). */
export function customerContactsRoutes(router: PackRouter, pack: PackContext): void {
  const contacts = pack.use('crm.customers');
  const tags = ['crm'];

  router.put('/crm/customers/:customerRef/contact', {
    summary: 'Set a customer\'s contact address and whether it takes cart reminders',
    tags, auth: 'tenant', role: 'editor', body: contactBody, response: contactResponse,
    errors: ['validation_failed', 'not_found', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => contacts.put(ctx.state.rc, customerRef(ctx.params.customerRef), ctx.state.body as { email: string; cartReminders: boolean }));

  router.get('/crm/customers/:customerRef/contact', {
    summary: 'A customer\'s contact address (404 when none is set)',
    tags, auth: 'tenant', role: 'editor', response: contactResponse,
    errors: ['not_found', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    const found = await contacts.get(ctx.state.rc, customerRef(ctx.params.customerRef));
    if (!found) throw NotFound('This customer has no contact address');
    return found;
  });

  router.delete('/crm/customers/:customerRef/contact', {
    summary: 'Erase a customer\'s contact address (right to erasure)',
    tags, auth: 'tenant', role: 'admin', response: { type: 'object', properties: { deleted: { type: 'integer' } } },
    errors: ['not_found', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => contacts.remove(ctx.state.rc, customerRef(ctx.params.customerRef)));
}
