import { definePack } from '../../core/kernel/define-pack.js';

/** CRM: deals through the sales pipeline. A closed namespace: tenants cannot add schemas to `crm`. */
export default definePack({
  name: 'crm',
  description: 'Customer relationship management: deals',
  licensed: 'crm',
  namespaces: [{ name: 'crm', open: false, schemas: ['deal'] }],
});
