import type { ServiceBuilder } from '../../core/pack-api.js';
import { DomainsService } from './domains.service.js';
import { FeaturesService } from './features.service.js';
import { InvitationsService } from './invitations.service.js';
import { KeycloakMemberDirectory } from './keycloak-member-directory.js';
import { LocalMemberDirectory, type MemberDirectory } from './member-directory.js';
import { MembersRepository } from './members.repository.js';
import { ProvisioningService } from './provisioning.service.js';
import { TenantDocumentsSiteProfile, type SiteProfileStore } from './site-profile.store.js';
import { TenantDocumentsService } from './tenant-documents.service.js';

declare module '../../core/pack-api.js' {
  interface PackServices {
    /** A tenant's site config and branding, for other packs (the CMS import writes navigation and branding). */
    'tenant-admin.siteProfile': SiteProfileStore;
    'tenant-admin.documents': TenantDocumentsService;
    'tenant-admin.features': FeaturesService;
    'tenant-admin.domains': DomainsService;
    'tenant-admin.members': MembersRepository;
    'tenant-admin.directory': MemberDirectory;
    'tenant-admin.invitations': InvitationsService;
    'tenant-admin.provisioning': ProvisioningService;
  }
}

/** The pack's services, built once per app; each reads the others through `pack.use`. */
export const tenantAdminServices = {
  siteProfile: (pack) => new TenantDocumentsSiteProfile(pack.tenants, pack.use('tenant-admin.documents')),
  documents: (pack) => new TenantDocumentsService(pack.db, pack.locales),
  features: (pack) => new FeaturesService(pack.db),
  domains: (pack) => new DomainsService(pack.db, pack.config, pack.use('tenant-admin.features')),
  members: (pack) => new MembersRepository(pack.db),
  directory: (pack) => {
    const local = new LocalMemberDirectory(pack.use('tenant-admin.members'));
    const kc = pack.config.keycloak;
    return kc.baseUrl && kc.realm && kc.clientId && kc.clientSecret ? new KeycloakMemberDirectory(kc, local) : local;
  },
  invitations: (pack) => new InvitationsService(
    pack.db, pack.config, pack.use('tenant-admin.members'), pack.use('tenant-admin.directory'), pack.mail, pack.events, pack.settings, pack.rateLimits, pack.audit,
  ),
  provisioning: (pack) => new ProvisioningService(pack, pack.use('tenant-admin.documents'), pack.use('tenant-admin.domains'), pack.use('tenant-admin.invitations')),
} satisfies Record<string, ServiceBuilder>;
