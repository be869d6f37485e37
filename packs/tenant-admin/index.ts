import { definePack } from '../../core/pack-api.js';
import { domainsRoutes } from './domains.routes.js';
import { featuresRoutes } from './features.routes.js';
import { membersRoutes } from './members.routes.js';
import { tenantAdminMigration } from './migrations/0200-tenant-admin.js';
import { dropProvisioningKeysMigration } from './migrations/0201-drop-provisioning-keys.js';
import { widerMemberRolesMigration } from './migrations/0202-wider-member-roles.js';
import { modulesRoutes } from './modules.routes.js';
import { organizationsRoutes } from './organizations.routes.js';
import { platformSettingsRoutes } from './platform-settings.routes.js';
import { provisioningRoutes } from './provisioning.routes.js';
import { siteProfileRoutes } from './site-profile.routes.js';
import { tenantAdminServices } from './tenant-admin.services.js';
import { tenantsRoutes } from './tenants.routes.js';

/**
 * Tenant administration: tenants, provisioning, site config, domains, branding, features, modules, members,
 * platform settings. Provides `tenant-admin.siteProfile` (site config and branding for other packs).
 */
export default definePack({
  name: 'tenant-admin',
  description: 'Tenants and their administration',
  admin: 'admin/screens.ts',
  migrations: [tenantAdminMigration, dropProvisioningKeysMigration, widerMemberRolesMigration],
  provides: tenantAdminServices,
  routes(router, pack) {
    tenantsRoutes(router, pack);
    provisioningRoutes(router, pack);
    siteProfileRoutes(router, pack);
    domainsRoutes(router, pack);
    featuresRoutes(router, pack);
    modulesRoutes(router, pack);
    membersRoutes(router, pack);
    platformSettingsRoutes(router, pack);
    organizationsRoutes(router, pack);
  },
  start(pack) {
    // Tokens without a tenant claim act on a tenant with the role of their active membership there.
    const members = pack.use('tenant-admin.members');
    pack.memberships.use({
      roleOf: (tenantId, principal) => members.activeRole(null, tenantId, principal.userId, principal.email),
      holdsRole: (rc, tenantId, role) => members.holdsRole(rc, tenantId, role, new Date().toISOString()),
    });
    // The locales of localised records and of the public runtime are the site config's (CONTRACT.md 17.2).
    const documents = pack.use('tenant-admin.documents');
    pack.locales.use({ localesOf: (rc, tenantId) => documents.localesOf(rc, tenantId) });
  },
});
