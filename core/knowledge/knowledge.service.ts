import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';

/**
 * The knowledge store: entries with full-text search (SQLite FTS5, PostgreSQL tsvector).
 * Built by the CMS issue (#5).
 */
export class KnowledgeService {
  constructor(readonly config: Config, readonly db: Database, readonly logger: Logger) {}
}
