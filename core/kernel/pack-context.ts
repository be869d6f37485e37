import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { Database } from '../db/database.js';
import type { RecordsService } from '../data/records.service.js';
import type { EventsService } from '../events/events.service.js';
import type { MailService } from '../mail/mail.service.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { SettingsHolder } from '../settings/settings-provider.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { KernelServices } from './services.js';

/**
 * What a pack gets from the kernel. Packs reach kernel services only through this, never through
 * globals, app.context or another pack's files.
 */
export interface PackContext extends KernelServices {
  readonly name: string;
  readonly config: Config;
  readonly logger: Logger;
}

export type { Config, Database, RecordsService, EventsService, MailService, SchemaRegistry, SettingsHolder, TenantsService };
