import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';

/**
 * The storage mediator: tenant-scoped objects on the local driver or any S3-compatible store.
 * Built by the storage issue (#6).
 */
export class StorageService {
  constructor(readonly config: Config, readonly db: Database, readonly logger: Logger) {}
}
