import type { Migration } from '../migration.js';
import { kernelMigration } from './0001-kernel.js';
import { eventsMigration } from './0100-events.js';
import { storageMigration } from '../../storage/storage.migration.js';
import { rateLimitsMigration } from './0002-rate-limits.js';
import { outboxRetentionMigration } from './0101-outbox-retention.js';
import { idFunctionMigration } from './0003-id-function.js';
import { outboxEventsByIdMigration } from './0102-outbox-events-by-id.js';
import { outboxPositionsMigration } from './0103-outbox-positions.js';
import { outboxHandlersMigration } from './0104-outbox-handlers.js';
import { platformSettingsMigration } from '../../settings/platform-settings.migration.js';
import { knowledgeMigration } from '../../knowledge/knowledge.migration.js';
import { idempotencyMigration } from './0004-idempotency.js';
import { recordCountsMigration } from './0010-record-counts.js';
import { schemaVersionsMigration } from './0011-schema-versions.js';
import { schemaMigrationRunsMigration } from './0012-schema-migration-runs.js';
import { apiTokensMigration } from './0013-api-tokens.js';

/** The kernel's migrations, in order. Packs add theirs through definePack({ migrations }). */
export const kernelMigrations: Migration[] = [kernelMigration, eventsMigration, storageMigration, rateLimitsMigration, idFunctionMigration, idempotencyMigration, outboxRetentionMigration, outboxEventsByIdMigration,
  outboxPositionsMigration, outboxHandlersMigration, platformSettingsMigration, knowledgeMigration, recordCountsMigration, schemaVersionsMigration,
  schemaMigrationRunsMigration, apiTokensMigration];
