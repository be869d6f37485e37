import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { RecordsService } from '../data/records.service.js';
import { EventsService } from '../events/events.service.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { Authenticator } from '../http/auth.js';
import { MailService } from '../mail/mail.service.js';
import { SchemaRegistry } from '../metadata/schema-registry.js';
import { EnvironmentSettings, SettingsHolder } from '../settings/settings-provider.js';
import { TenantsService } from '../tenants/tenants.service.js';

/** The kernel services, built once per app and handed to packs through their PackContext. */
export interface KernelServices {
  readonly db: Database;
  readonly tenants: TenantsService;
  readonly schemas: SchemaRegistry;
  readonly records: RecordsService;
  readonly events: EventsService;
  readonly mail: MailService;
  readonly settings: SettingsHolder;
}

export interface KernelInternals extends KernelServices {
  readonly hooks: HookRegistry;
  readonly authenticator: Authenticator;
}

export function createKernelServices(config: Config, db: Database, logger: Logger): KernelInternals {
  const tenants = new TenantsService(db);
  const schemas = new SchemaRegistry(db);
  const hooks = new HookRegistry();
  const events = new EventsService(db, logger);
  const records = new RecordsService(db, schemas, hooks, events);
  const settings = new SettingsHolder(new EnvironmentSettings(config));
  const mail = new MailService(settings, logger);
  const authenticator = new Authenticator(config);
  return { db, tenants, schemas, hooks, events, records, settings, mail, authenticator };
}
