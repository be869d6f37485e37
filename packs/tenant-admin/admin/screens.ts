import type { ConsoleScreens } from '../../../admin/src/pack-kit.js';

/**
 * Tenant administration's console screens (declared by `admin` in packs/tenant-admin/index.ts): the tenant's
 * settings (site config, branding, domains, modules, features, members and invitations) and, for a superadmin,
 * the platform settings (SMTP), both in the console's Administration section; and the tenants a superadmin picks from.
 */
export default {
  routes: [
    { path: '/tenant', screen: () => import('./TenantSettings.js') },
    { path: '/platform', screen: () => import('./PlatformSettings.js') },
  ],
  menu: [
    { section: 'Administration', label: 'Tenant settings', to: '/tenant' },
    { section: 'Administration', label: 'Platform settings', to: '/platform', role: 'superadmin' },
  ],
  // The tenant picker's choices for a superadmin.
  tenantList: '/admin/tenants?limit=200',
  // The dashboard's "create your first tenant" on a platform without one.
  tenantCreate: '/admin/tenants',
} satisfies ConsoleScreens;
