import { AppError, DatabaseUnavailable, type ErrorDetail } from '../base/errors.js';
import { sqliteDialect } from './dialects/sqlite.js';
import { postgresDialect } from './dialects/postgres.js';

/** Driver errors that mean something to a client become contract errors; the rest stay internal. */
export function translateDbError(error: unknown): AppError | null {
  const conflict = uniqueConflict(error);
  if (conflict) return conflict;
  if (sqliteDialect.isForeignKeyViolation(error) || postgresDialect.isForeignKeyViolation(error)) {
    return new AppError('conflict', 409, 'The record refers to something that does not exist', [], {}, { cause: error });
  }
  if (sqliteDialect.isUnavailable(error) || postgresDialect.isUnavailable(error)) {
    return DatabaseUnavailable(RETRY_AFTER_SECONDS, [], { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
  return null;
}

/**
 * A unique violation of either engine as 409 `conflict` naming its fields in `details` (`/email`; every field
 * of a unique set), else null. Database.transaction throws this in place of the driver's error, so that
 * code inside or around a write (a pack's included) sees one error on both engines: `err instanceof
 * AppError && err.code === 'conflict'`. The driver's error stays its `cause`.
 */
export function uniqueConflict(error: unknown): AppError | null {
  if (!sqliteDialect.isUniqueViolation(error) && !postgresDialect.isUniqueViolation(error)) return null;
  const fields = uniqueFields(error);
  const details: ErrorDetail[] = fields.map((f) => ({ path: `/${f}`, message: fields.length > 1 ? `with ${fields.filter((o) => o !== f).join(', ')}, is taken by another record` : 'is taken by another record' }));
  const what = fields.length ? ` ${fields.join(', ')}` : ' unique values';
  return new AppError('conflict', 409, `A record with the same${what} exists already`, details, {}, { cause: error });
}

/** The fields of each record table's unique index, by index name (see rememberUniqueIndex). */
const uniqueIndexes = new Map<string, string[]>();

/**
 * Tells the translation which fields a unique index of a record table stands for (its name is made from a
 * hash of them, so it cannot be read back): called for each unique set of every schema compiled, before any
 * write to it.
 */
export function rememberUniqueIndex(indexName: string, fields: string[]): void {
  uniqueIndexes.set(indexName, fields);
}

/**
 * The fields a unique violation names: a record table's index by its name (PostgreSQL's `constraint`,
 * SQLite's "index '…'"), else the columns the driver lists (PostgreSQL's `Key (…)=(…)` detail, SQLite's
 * "table.column, …"), as camelCase and without `tenant_id`; empty when neither says.
 */
function uniqueFields(error: unknown): string[] {
  const { constraint, detail, message } = error as { constraint?: unknown; detail?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const index = typeof constraint === 'string' ? constraint : /UNIQUE constraint failed: index '([^']+)'/.exec(text)?.[1];
  const known = index ? uniqueIndexes.get(index) : undefined;
  if (known) return known;
  let columns: string[] = [];
  const key = typeof detail === 'string' ? /^Key \((.*)\)=\(/s.exec(detail)?.[1] : undefined;
  if (key) {
    // A JSON field's expression names it as 'field'::text; a plain column stands as itself.
    columns = splitTopLevel(key).map((part) => /'((?:[^']|'')+)'::text/.exec(part)?.[1]?.replace(/''/g, "'") ?? part.trim());
  } else {
    const listed = /UNIQUE constraint failed: ((?:[\w"]+\.[\w"]+)(?:, [\w"]+\.[\w"]+)*)$/.exec(text)?.[1];
    if (listed) columns = listed.split(', ').map((c) => c.slice(c.indexOf('.') + 1).replace(/"/g, ''));
  }
  return columns.filter((c) => c !== 'tenant_id' && /^[\w$-]+$/.test(c)).map((c) => (/^[a-z0-9_]+$/.test(c) ? c.replace(/_([a-z0-9])/g, (_, l: string) => l.toUpperCase()) : c));
}

/** `a, (b, c), d` as its parts at the outermost level. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** What a client is told to wait before retrying a request that failed because the database was unreachable. */
const RETRY_AFTER_SECONDS = 5;

/** A table the statement needs is missing (before `npm run migrate`): SQLite's "no such table", PostgreSQL's 42P01. */
export function isMissingTable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === '42P01' || (typeof message === 'string' && message.includes('no such table'));
}
