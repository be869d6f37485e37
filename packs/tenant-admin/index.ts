import { definePack } from '../../core/kernel/define-pack.js';
import { platformSettingsMigration } from '../../core/settings/platform-settings.migration.js';
import { domainsRoutes } from './domains.routes.js';
import { featuresRoutes } from './features.routes.js';
import { membersRoutes } from './members.routes.js';
import { tenantAdminMigration } from './migrations/0200-tenant-admin.migration.js';
import { modulesRoutes } from './modules.routes.js';
import { organizationsRoutes } from './organizations.routes.js';
import { platformSettingsRoutes } from './platform-settings.routes.js';
import { provisioningRoutes } from './provisioning.routes.js';
import { siteProfileRoutes } from './site-profile.routes.js';
import { TenantDocumentsSiteProfile } from './site-profile.store.js';
import { servicesFor } from './tenant-admin.services.js';
import { tenantsRoutes } from './tenants.routes.js';

/** Tenant administration: tenants, provisioning, site config, domains, branding, features, modules, members, settings. */
export default definePack({
  name: 'tenant-admin',
  description: 'Tenants and their administration',
  migrations: [platformSettingsMigration, tenantAdminMigration],
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
    // Mail reads the SMTP settings from the platform settings store from now on.
    pack.settings.use(servicesFor(pack).settings);
    // Other packs (the CMS import) write site config and branding through the kernel's siteProfile slot.
    pack.siteProfile.use(new TenantDocumentsSiteProfile(pack.tenants, servicesFor(pack).documents));
    // Tokens without a tenant claim act on a tenant with the role of their active membership there.
    const { members } = servicesFor(pack);
    pack.memberships.use({ roleOf: (tenantId, principal) => members.activeRole(null, tenantId, principal.userId, principal.email) });
  },
});
