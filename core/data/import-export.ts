import { Readable, Transform, type TransformCallback } from 'node:stream';
import type { Database } from '../db/database.js';
import { AppError, Conflict, PayloadTooLarge, ValidationFailed } from '../base/errors.js';
import { assertCleanJson, assertJsonDepth, MAX_JSON_DEPTH } from '../http/input-hygiene.js';
import type { RequestContext } from '../base/request-context.js';
import { SERVER_FIELDS, type FieldType } from '../metadata/schema-definition.js';
import type { CompiledSchema, SchemaRegistry } from '../metadata/schema-registry.js';
import { BULK_LIMIT, BulkWriter, ItemsFailed, MAX_LISTED_ERRORS } from './bulk.js';
import { parseListQuery, type ListQuery } from './list-query.js';
import { assertReadableFields, readableRecord } from './record-policies.js';
import type { ListedRow } from './records.repository.js';
import type { RecordsService } from './records.service.js';

export type TransferFormat = 'ndjson' | 'csv';

/** Rows per keyset page of an NDJSON export. */
const EXPORT_PAGE = 1000;
/**
 * Rows per keyset page of a CSV export. csv-stringify allocates about four times what an NDJSON line costs
 * (a young collection every ~500 rows, against ~2,200), so a page of 1000 lived through two young collections
 * and its chunks (and the driver's socket reads) were often promoted: on PostgreSQL up to 51-60 MiB of Buffers
 * waited for full collections (24-32 during an export of 1,000,000 records), peak RSS 152-159 MiB (pages of
 * 500: 130 or 159). Pages of 250: 2-6 MiB, 2 full collections, peak 128-142 MiB, the same records/s.
 */
const CSV_PAGE = 250;
/**
 * Bytes per chunk of an export. Each record's text is encoded into the chunk as its row is read (on
 * PostgreSQL as the driver reads it), so no page of rows is held: a page of 1000 row objects, held while it
 * arrived and was written out, was alive at young collections and promoted (~380 MB over an export of
 * 1,000,000 records, RSS 172 MiB at peak); encoded at once, ~30 MB are (peak ~112 MiB). What waits for the
 * client is then bytes outside V8's heap. (A page as one string, ~250 KiB, would land in V8's large-object
 * space, which only a full collection empties.)
 */
const EXPORT_BYTES = 64 * 1024;
/**
 * CSV rows stringified at once: csv-stringify's sync API prepares its options on each call, so one call per
 * row would cost more than the row; a few rows' cells are all that wait for it.
 */
const CSV_ROWS = 100;

/** What an import error entry is (CONTRACT.md 16.1): each entry carries one of these as `code`. */
export type ImportErrorCode = 'validation_failed' | 'invalid_json' | 'conflict' | 'forbidden';

export interface ImportError {
  line: number;
  path: string;
  message: string;
  code: ImportErrorCode;
}

/**
 * A line that cannot become a record before any schema sees it: not JSON, nested deeper than the request
 * bodies may be, or holding a NUL or a lone surrogate (the input hygiene of CONTRACT.md 13, line by line).
 */
class LineRefused {
  constructor(readonly errors: Array<{ path: string; message: string; code: ImportErrorCode }>) {}

  static one(code: ImportErrorCode, message: string, path = '/'): LineRefused {
    return new LineRefused([{ path, message, code }]);
  }
}

type ReadLine = { line: number; value: Record<string, unknown> | LineRefused };

export interface ImportResult {
  created: number;
  updated: number;
  failed: number;
  errors: ImportError[];
}

export interface ImportOptions {
  format: TransferFormat;
  upsert: string | null;
  atomic: boolean;
  maxBytes: number;
}

/**
 * Export and import of a schema's records (CONTRACT.md 12.3). An export walks the list's filters and sort
 * in keyset pages and is read by the client at its own pace (a Readable pulls the next page only when
 * the response has room), so memory stays flat whatever the number of records. An import reads the body
 * as a stream and writes its records in batches of up to 1000 through the bulk writer (validation, hooks,
 * events), each batch through the schema's migration gate (CONTRACT.md 12.1) and checked against the
 * version current once it passed; an atomic import, one transaction, passes the gate once for all.
 */
export class RecordTransfer {
  constructor(
    private readonly db: Database, private readonly schemas: SchemaRegistry, private readonly records: RecordsService, private readonly bulk: BulkWriter,
  ) {}

  /**
   * The records matching `query` (the list's filter and sort; paging ignored) as NDJSON or CSV text.
   * The CSV tools load with the first CSV export or import, not with the service.
   */
  async export(rc: RequestContext, schema: CompiledSchema, query: Record<string, string | string[] | undefined>, format: TransferFormat): Promise<Readable> {
    const { limit: _l, offset: _o, cursor: _c, count: _n, fields: _f, format: _format, ...rest } = query;
    const pageRows = format === 'csv' ? CSV_PAGE : EXPORT_PAGE;
    const parsed: ListQuery = { ...parseListQuery(rest, schema.types), limit: pageRows, offset: 0, count: false, fields: null };
    const repository = this.records.repository;
    // Under role policies (CONTRACT.md 16.1): readable records only (their filter joins the query), readable fields only
    // (the CSV header included); a filter or sort on a field never readable is 400 invalid_filter.
    const access = await this.records.accessTo(rc, schema);
    if (access) {
      assertReadableFields(access, [...parsed.filters.map((f) => f.field), ...parsed.sort.map((s) => s.field).filter((f) => f !== 'id')]);
      if (access.rows) parsed.policy = access.rows;
    }
    const readable = access && !access.readAll ? access : null;
    const shown = (row: ListedRow) => (readable ? readableRecord(readable, repository.toRecord(row)) : null);
    // Each row, as the driver reads it, is written at once into `bytes` (NDJSON: its line; CSV: its cells, a
    // few rows at a time through csv-stringify), so no page of rows is held while the client reads.
    const bytes = new TextBytes();
    let write: (row: ListedRow) => void;
    let flush = () => {};
    if (format === 'ndjson') {
      // The stored document (its translations included, CONTRACT.md 17.2), or under a policy the readable record.
      write = (row) => {
        if (!readable) return bytes.add(repository.toStoredJson(row), true);
        const record = shown(row);
        if (record) bytes.add(JSON.stringify(record), true);
      };
    } else {
      const everReadable = readable?.everReadable;
      const columns = ['id', ...Object.keys(schema.schema.properties ?? {}).filter((f) => !(SERVER_FIELDS as readonly string[]).includes(f) && (!everReadable || everReadable.has(f))),
        'createdAt', 'updatedAt', 'version'];
      const { stringify: stringifyCsv } = await import('csv-stringify/sync');
      // csv-stringify writes false as an empty cell by default: booleans are written as true/false.
      const options = { columns, header: false, cast: { boolean: (v: boolean) => String(v) } };
      bytes.add(stringifyCsv([], { ...options, header: true }), false);
      let cells: unknown[][] = [];
      flush = () => {
        if (cells.length) bytes.add(stringifyCsv(cells, options), false);
        cells = [];
      };
      write = (row) => {
        const record = readable ? shown(row) : repository.toRecord(row);
        if (!record) return;
        cells.push(columns.map((c) => csvCell(record[c])));
        if (cells.length >= CSV_ROWS) flush();
      };
    }
    return Readable.from((async function* exported() {
      yield* bytes.take();
      for (;;) {
        let seen = 0;
        let last: ListedRow | null = null;
        const found = await repository.eachListedRow(rc, schema, parsed, (row) => {
          // The row past the page only tells that more follow.
          if (++seen > pageRows) return;
          write(row);
          last = row;
        });
        flush();
        yield* bytes.take();
        if (found <= pageRows) return;
        const record = repository.toRecord(last!);
        parsed.cursor = parsed.sort.map((s) => (record[s.field] ?? null) as unknown);
      }
    })(), { objectMode: false });
  }

  /**
   * Reads records from `body` and writes them; see CONTRACT.md 12.3 for the answer. `schema` (resolved
   * before the body is read) types the CSV columns; each batch is checked against the schema current
   * when it passes the gate, so that a migration that switched meanwhile is honoured.
   */
  async import(rc: RequestContext, schema: CompiledSchema, body: Readable, options: ImportOptions): Promise<ImportResult> {
    this.bulk.upsertField(schema, options.upsert);
    const result: ImportResult = { created: 0, updated: 0, failed: 0, errors: [] };
    const fail = (line: number, path: string, message: string, code: ImportErrorCode) => {
      if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ line, path, message, code });
    };
    const limited = body.pipe(new ByteLimit(options.maxBytes));
    body.on('error', (err) => limited.destroy(err));
    const { namespace, name } = schema;
    const run = async (rc: RequestContext, gated: <T>(write: (schema: CompiledSchema) => Promise<T>) => Promise<T>) => {
      let batch: ReadLine[] = [];
      const keys = new Set<string>();
      const flush = async () => {
        const lines = batch;
        batch = [];
        keys.clear();
        if (!lines.length) return;
        await gated(async (current) => {
          const upsert = this.bulk.upsertField(current, options.upsert);
          const checked: Array<{ line: number; data: Record<string, unknown> }> = [];
          const values = await this.bulk.filledForCreate(rc, current, lines.map((l) => l.value), upsert);
          // In line order, so that the errors listed are the first ones.
          for (const [i, { line }] of lines.entries()) {
            const value = values[i];
            if (value instanceof LineRefused) {
              result.failed += 1;
              for (const e of value.errors) fail(line, e.path, e.message, e.code);
              continue;
            }
            const outcome = this.bulk.check(current, value, upsert);
            if ('errors' in outcome) {
              result.failed += 1;
              for (const e of outcome.errors) fail(line, e.path, e.message, 'validation_failed');
            } else checked.push({ line, data: outcome.data });
          }
          // atomic: once anything failed, nothing more is written (the transaction is rolled back).
          if (checked.length && !(options.atomic && result.failed)) await this.writeBatch(rc, current, checked, upsert, options.atomic, result, fail);
        });
      };
      for await (const { line, value } of records(limited, options.format, schema.types)) {
        if (options.upsert && !(value instanceof LineRefused)) {
          // A key seen in this batch already: write the batch first, so this line updates what it wrote.
          const key = JSON.stringify(value[options.upsert] ?? null);
          if (keys.has(key)) await flush();
          keys.add(key);
        }
        batch.push({ line, value: value instanceof LineRefused ? value : withoutServerFields(value) });
        if (batch.length >= BULK_LIMIT) await flush();
      }
      await flush();
      if (options.atomic && result.failed) {
        throw new AppError('validation_failed', 400, `${result.failed} records failed; nothing was imported`, result.errors as never);
      }
    };
    if (options.atomic) {
      // One transaction, checked against one version: the gate is passed once and held to the end (a
      // migration waits for it, as for any write that passed).
      await this.schemas.writing(rc, namespace, name, (current) => this.db.transaction(rc, (trx) => run(trx, (write) => write(current))));
    } else {
      await run(rc, (write) => this.schemas.writing(rc, namespace, name, write));
    }
    return result;
  }

  /**
   * Writes one batch. Items that a hook or a merged document refuses are reported and the rest written
   * again; when a unique value is taken, each record is written on its own to find the lines that fail.
   * Atomic imports stop at the first failure (their transaction is rolled back at the end).
   */
  private async writeBatch(
    rc: RequestContext, schema: CompiledSchema, lines: Array<{ line: number; data: Record<string, unknown> }>, upsert: string | null,
    atomic: boolean, result: ImportResult, fail: (line: number, path: string, message: string, code: ImportErrorCode) => void,
  ): Promise<void> {
    let pending = lines;
    while (pending.length) {
      try {
        const written = await this.bulk.write(rc, schema, pending.map((l) => l.data), upsert);
        // Inside the import's transaction the writes wait in a queue: run them now, so that a taken
        // unique value shows in this batch and the queue never holds more than one batch.
        if (atomic) await this.db.sql(rc).rows('SELECT 1 AS one', []);
        result.created += written.created;
        result.updated += written.updated;
        return;
      } catch (err) {
        if (err instanceof ItemsFailed) {
          const bad = new Set(err.errors.map((e) => e.index));
          for (const e of err.errors) fail(pending[e.index].line, e.path, e.message, (e as { code?: ImportErrorCode }).code ?? 'validation_failed');
          result.failed += bad.size;
          if (atomic) return;
          pending = pending.filter((_, i) => !bad.has(i));
          continue;
        }
        if (!this.isConflict(err)) throw err;
        if (atomic || pending.length === 1) {
          const first = pending[0].line;
          const last = pending[pending.length - 1].line;
          result.failed += 1;
          fail(first, upsert ? `/${upsert}` : '/', `a record with the same unique values exists already${last > first ? ` (one of lines ${first}-${last})` : ''}`, 'conflict');
          return;
        }
        for (const one of pending) await this.writeBatch(rc, schema, [one], upsert, atomic, result, fail);
        return;
      }
    }
  }

  private isConflict(err: unknown): boolean {
    return (err instanceof AppError && err.code === Conflict.code) || this.db.dialect.isUniqueViolation(err);
  }
}

/** Export text encoded into Buffers of EXPORT_BYTES (or one text's size) as it is added (see EXPORT_BYTES). */
class TextBytes {
  private chunks: Buffer[] = [];
  private chunk = Buffer.allocUnsafe(EXPORT_BYTES);
  private used = 0;

  /** Adds `text`, followed by a newline if `line`. */
  add(text: string, line: boolean): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8, and the newline 1. Counted exactly only when that
    // bound does not fit: for a long text (CSV rows come many at once) it would start a new chunk far too early.
    if (this.used + text.length * 3 + 1 > this.chunk.length) {
      const size = Buffer.byteLength(text) + 1;
      if (this.used + size > this.chunk.length) {
        if (this.used) this.chunks.push(this.chunk.subarray(0, this.used));
        this.chunk = Buffer.allocUnsafe(Math.max(EXPORT_BYTES, size));
        this.used = 0;
      }
    }
    this.used += this.chunk.write(text, this.used);
    if (line) this.chunk[this.used++] = 10;
  }

  /** The chunks so far, the one being filled included; the next text starts a new chunk. */
  take(): Buffer[] {
    const chunks = this.chunks;
    if (this.used) chunks.push(this.chunk.subarray(0, this.used));
    this.chunks = [];
    this.chunk = Buffer.allocUnsafe(EXPORT_BYTES);
    this.used = 0;
    return chunks;
  }
}

/**
 * A cell of an exported CSV row: scalars as they are, objects and arrays as JSON text, absent as empty.
 * Text that a spreadsheet would read as a formula gets a leading `'` (see formulaSafe); numbers and
 * booleans are written as they are (a spreadsheet reads `-5` as the number it is).
 */
function csvCell(value: unknown): unknown {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.length && FORMULA_START[value.charCodeAt(0)] ? formulaSafe(value) : value;
  return typeof value === 'object' ? JSON.stringify(value) : value;
}

/**
 * First characters that make a spreadsheet read a cell as a formula (CONTRACT.md 13, OWASP's CSV
 * injection list): `=`, `+`, `-`, `@`, tab, carriage return; and `'`, the mark itself (see formulaSafe).
 */
const FORMULA_START = new Uint8Array(128);
for (const c of '=+-@\t\r\'') FORMULA_START[c.charCodeAt(0)] = 1;

/**
 * Text starting with a formula character, written with a leading `'` (shown as text, not run). Text that
 * already starts with `'` and a formula character gets one more, so that an import, which takes one `'`
 * off such a cell (see fromFormulaSafe), reads back exactly what was exported.
 */
function formulaSafe(text: string): string {
  if (text.charCodeAt(0) !== 0x27) return `'${text}`;
  return text.length > 1 && FORMULA_START[text.charCodeAt(1)] ? `'${text}` : text;
}

/** A CSV text cell as exported, back: a `'` followed by a formula character is the export's mark, taken off. */
function fromFormulaSafe(text: string): string {
  return text.charCodeAt(0) === 0x27 && text.length > 1 && FORMULA_START[text.charCodeAt(1)] ? text.slice(1) : text;
}

function withoutServerFields(value: Record<string, unknown>): Record<string, unknown> {
  // An export imports back: the server-managed columns it carries are ignored, not refused.
  if (!SERVER_FIELDS.some((f) => Object.hasOwn(value, f))) return value;
  const copy = { ...value };
  for (const f of SERVER_FIELDS) delete copy[f];
  return copy;
}

/**
 * The records of a body, numbered from 1; a line that cannot be read, or that the input hygiene refuses
 * (CONTRACT.md 13: nesting deeper than 64, a NUL or a lone surrogate), yields a LineRefused in its place.
 */
async function* records(body: Readable, format: TransferFormat, types: Map<string, FieldType>): AsyncGenerator<ReadLine> {
  let line = 0;
  if (format === 'ndjson') {
    body.setEncoding('utf8');
    let rest = '';
    const read = (text: string): ReadLine | null => {
      if (text.trim() === '') return null;
      line += 1;
      let value: unknown;
      try {
        assertJsonDepth(text);
        value = JSON.parse(text);
      } catch (err) {
        if (err instanceof AppError) return { line, value: LineRefused.one('invalid_json', err.message.replace('The request body', 'The line')) };
        return { line, value: LineRefused.one('invalid_json', `not valid JSON: ${(err as Error).message}`) };
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return { line, value: LineRefused.one('validation_failed', 'must be a JSON object') };
      return { line, value: cleanOrRefused(value as Record<string, unknown>) };
    };
    for await (const chunk of body as AsyncIterable<string>) {
      const text = rest + chunk;
      let from = 0;
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', from)) {
        const record = read(text.slice(from, at));
        from = at + 1;
        if (record) yield record;
      }
      rest = text.slice(from);
    }
    const record = read(rest);
    if (record) yield record;
    return;
  }
  const { parse: parseCsv } = await import('csv-parse');
  const parser = body.pipe(parseCsv({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: true }));
  body.on('error', (err) => parser.destroy(err));
  try {
    for await (const row of parser as AsyncIterable<Record<string, string>>) {
      line += 1;
      yield { line, value: typedRow(row, types) };
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The CSV itself is malformed: nothing after this point can be read reliably.
    yield { line: line + 1, value: LineRefused.one('validation_failed', `unreadable CSV: ${(err as Error).message}`) };
  }
}

/** A parsed record, or the paths that hold a NUL or a lone surrogate (validation_failed, never stored). */
function cleanOrRefused(value: Record<string, unknown>): Record<string, unknown> | LineRefused {
  try {
    assertCleanJson(value);
    return value;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return new LineRefused(err.details.map((d) => ({ path: d.path, message: d.message, code: 'validation_failed' as const })));
  }
}

/**
 * A CSV row as a record: each value read as the schema types its column (numbers, booleans; objects and
 * arrays as JSON text); an empty cell leaves the field out. A value that does not read as its type stays
 * text, so the schema's validation names it.
 */
function typedRow(row: Record<string, string>, types: Map<string, FieldType>): Record<string, unknown> | LineRefused {
  const out: Record<string, unknown> = {};
  for (const [column, text] of Object.entries(row)) {
    if (text === '' || text === undefined) continue;
    const type = types.get(column);
    // A JSON cell is held to the request bodies' nesting limit before it is parsed.
    if (type === 'object' || type === 'array') {
      try {
        assertJsonDepth(text);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return LineRefused.one('invalid_json', `The cell nests deeper than ${MAX_JSON_DEPTH} levels`, `/${column}`);
      }
    }
    out[column] = typedCell(text, type);
  }
  return cleanOrRefused(out);
}

function typedCell(text: string, type: FieldType | undefined): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(text.trim());
      return text.trim() !== '' && Number.isFinite(n) ? n : text;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'object':
    case 'array':
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    default:
      return fromFormulaSafe(text);
  }
}

/** Passes bytes through until `limit`, then fails with 413 payload_too_large. */
class ByteLimit extends Transform {
  private seen = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) callback(PayloadTooLarge(this.limit, [], { Connection: 'close' }));
    else callback(null, chunk);
  }
}

/** `format` of an import or export query: ndjson (default) or csv, else 400. */
export function transferFormat(value: unknown): TransferFormat {
  if (value === undefined || value === '' || value === 'ndjson') return 'ndjson';
  if (value === 'csv') return 'csv';
  throw ValidationFailed('format must be ndjson or csv', [{ path: 'query/format', message: 'must be ndjson or csv' }]);
}
