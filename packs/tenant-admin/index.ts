import { definePack } from '../../core/kernel/define-pack.js';
import { tenantsRoutes } from './tenants.routes.js';

/** Tenant administration: tenants, provisioning, site config, domains, branding, features, modules, members, settings. */
export default definePack({
  name: 'tenant-admin',
  description: 'Tenants and their administration',
  routes(router, pack) {
    tenantsRoutes(router, pack);
  },
});
