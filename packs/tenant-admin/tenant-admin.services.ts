import type { PackContext } from '../../core/kernel/pack-context.js';
import { PlatformSettingsService } from '../../core/settings/platform-settings.service.js';
import { DomainsService } from './domains.service.js';
import { FeaturesService } from './features.service.js';
import { InvitationsService } from './invitations.service.js';
import { KeycloakMemberDirectory } from './keycloak-member-directory.js';
import { LocalMemberDirectory, type MemberDirectory } from './member-directory.js';
import { MembersRepository } from './members.repository.js';
import { ProvisioningService } from './provisioning.service.js';
import { TenantDocumentsService } from './tenant-documents.service.js';

export interface TenantAdminServices {
  documents: TenantDocumentsService;
  features: FeaturesService;
  domains: DomainsService;
  members: MembersRepository;
  directory: MemberDirectory;
  invitations: InvitationsService;
  settings: PlatformSettingsService;
  provisioning: ProvisioningService;
}

const built = new WeakMap<PackContext, TenantAdminServices>();

/** The pack's services, built once per app from its PackContext (routes and start share them). */
export function servicesFor(pack: PackContext): TenantAdminServices {
  const existing = built.get(pack);
  if (existing) return existing;
  const { db, config } = pack;
  const documents = new TenantDocumentsService(db);
  const features = new FeaturesService(db);
  const domains = new DomainsService(db, config, features);
  const members = new MembersRepository(db);
  const local = new LocalMemberDirectory(members);
  const kc = config.keycloak;
  const directory: MemberDirectory = kc.baseUrl && kc.realm && kc.clientId && kc.clientSecret ? new KeycloakMemberDirectory(kc, local) : local;
  const settings = new PlatformSettingsService(db, config, pack.events, pack.logger);
  const invitations = new InvitationsService(db, config, members, directory, pack.mail, pack.events, settings, pack.rateLimits);
  const provisioning = new ProvisioningService(pack, documents, domains, invitations);
  const services = { documents, features, domains, members, directory, invitations, settings, provisioning };
  built.set(pack, services);
  return services;
}
