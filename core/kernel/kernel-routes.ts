import type { PackRouter } from '../http/route.js';
import type { KernelInternals } from './services.js';
import type { Config } from '../../config/index.js';
import { metadataRoutes } from '../metadata/metadata.routes.js';
import { dataRoutes } from '../data/data.routes.js';
import { bulkRoutes } from '../data/bulk.routes.js';
import { changesRoutes } from '../data/changes.routes.js';
import { ChangeStreams } from '../events/change-stream.js';
import { installOutbox } from '../events/outbox.module.js';
import { mountStorageRoutes } from '../storage/storage.routes.js';
import { apiTokensRoutes } from '../access/api-tokens.routes.js';

/** Endpoints of kernel services (not of a pack), mounted on the kernel's router in this order. */
export const kernelRoutes: Array<(router: PackRouter, kernel: KernelInternals, config: Config) => void> = [
  (router, kernel) => metadataRoutes(router, kernel.schemas, kernel.evolution, kernel.records.relations),
  // Before the record routes: /data/{ns}/{schema}/export is not a record id.
  (router, kernel, config) => bulkRoutes(router, kernel.schemas, kernel.records, kernel.bulk, kernel.db, config),
  (router, kernel, config) => {
    const streams = new ChangeStreams(kernel.db, kernel.events.bus, config.changes, kernel.logger);
    kernel.background.register(streams);
    changesRoutes(router, kernel.schemas, kernel.tenants, streams);
  },
  (router, kernel) => dataRoutes(router, kernel.schemas, kernel.records),
  (router, kernel, config) => installOutbox(router, kernel, config),
  (router, kernel) => mountStorageRoutes(router, kernel.storage),
  (router, kernel) => apiTokensRoutes(router, kernel.apiTokens),
];
