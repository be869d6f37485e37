import { AppError, DatabaseUnavailable } from '../base/errors.js';
import { sqliteDialect } from './dialects/sqlite.js';
import { postgresDialect } from './dialects/postgres.js';

/** Driver errors that mean something to a client become contract errors; the rest stay internal. */
export function translateDbError(error: unknown): AppError | null {
  if (sqliteDialect.isUniqueViolation(error) || postgresDialect.isUniqueViolation(error)) {
    return new AppError('conflict', 409, 'A record with the same unique values exists already', [], {}, { cause: error });
  }
  if (sqliteDialect.isForeignKeyViolation(error) || postgresDialect.isForeignKeyViolation(error)) {
    return new AppError('conflict', 409, 'The record refers to something that does not exist', [], {}, { cause: error });
  }
  if (sqliteDialect.isUnavailable(error) || postgresDialect.isUnavailable(error)) {
    return DatabaseUnavailable(RETRY_AFTER_SECONDS, [], { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
  return null;
}

/** What a client is told to wait before retrying a request that failed because the database was unreachable. */
const RETRY_AFTER_SECONDS = 5;

/** A table the statement needs is missing (before `npm run migrate`): SQLite's "no such table", PostgreSQL's 42P01. */
export function isMissingTable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === '42P01' || (typeof message === 'string' && message.includes('no such table'));
}
