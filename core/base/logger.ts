import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from '../../config/index.js';

/**
 * Field names whose values are never written to logs, at any of the first three levels of a log object
 * (`token`, `smtp.password`, `req.headers.authorization`). Matched by name in one pass with the URL
 * scrubbing below: pino's wildcard redaction paths cost several times the rest of a log line.
 */
export const REDACTED_KEYS = new Set([
  'authorization', 'cookie', 'password', 'pass', 'smtp_password', 'secret', 'token', 'apikey', 'api_key',
  'clientsecret', 'secretaccesskey', 'signingsecret', 'settingsencryptionkey',
]);

const MAX_DEPTH = 3;

/** Log lines wait in memory until this many bytes are pending, or LOG_FLUSH_MS passed. */
const LOG_BATCH_BYTES = 16 * 1024;
/** A batch's buffer: a batch, and room for the line that completes it. */
const LOG_BUFFER_BYTES = 2 * LOG_BATCH_BYTES;
const LOG_FLUSH_MS = 100;

const CENSOR = '[redacted]';

/** Query parameters that carry signatures or credentials in signed URLs and callbacks. */
const SECRET_QUERY = /([?&](?:signature|sig|token|access_token|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"'<>]*/gi;
const BEARER = /(\bBearer\s+)[A-Za-z0-9._~+/=-]+/g;

/** Removes signatures, tokens and bearer credentials from a string (URLs, error messages, stacks). */
export function scrubSecrets(text: string): string {
  if (!text.includes('=') && !/bearer/i.test(text)) return text;
  return text.replace(SECRET_QUERY, `$1${CENSOR}`).replace(BEARER, `$1${CENSOR}`);
}

/**
 * Censors secret fields and scrubs secrets from string values (URLs logged by fetch, storage, deliveries),
 * three levels deep; copies only what it changes.
 */
function scrubObject(value: Record<string, unknown>, depth = 1): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const inner = value[key];
    let scrubbed = inner;
    if (inner === undefined || inner === null) continue;
    if (REDACTED_KEYS.has(key.toLowerCase())) scrubbed = CENSOR;
    else if (typeof inner === 'string') scrubbed = scrubSecrets(inner);
    else if (depth < MAX_DEPTH && typeof inner === 'object' && !Array.isArray(inner) && !(inner instanceof Error)) {
      scrubbed = scrubObject(inner as Record<string, unknown>, depth + 1);
    }
    if (scrubbed !== inner) {
      copy ??= { ...value };
      copy[key] = scrubbed;
    }
  }
  return copy ?? value;
}

/** pino's error serializer (message, stack and causes), with secrets scrubbed from the text. */
function serializeError(err: Error): Record<string, unknown> {
  const serialized = pino.stdSerializers.err(err) as unknown as Record<string, unknown>;
  return scrubObject(serialized);
}

/**
 * The service's logger: JSON lines (pretty in a terminal outside production), LOG_LEVEL, secret fields
 * censored and secrets scrubbed from URLs and error texts. `destination` is for tests and tools.
 */
export function createLogger(config: Config, destination?: DestinationStream): Logger {
  const pretty = !destination && !config.isProduction && process.stdout.isTTY && config.logLevel !== 'silent';
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    base: { service: 'headless-platform' },
    serializers: { err: serializeError, error: serializeError },
    formatters: { log: (object) => scrubObject(object) },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } } : {}),
  };
  if (destination) {
    const logger = pino(options, destination);
    lineWriters.set(logger, destination);
    return logger;
  }
  if (pretty) return pino(options);
  const batch = new LineBatch(pino.destination({ dest: 1, sync: true, contentMode: 'buffer' }) as unknown as ConstructorParameters<typeof LineBatch>[0]);
  flushOnExit(batch);
  const logger = pino(options, batch);
  lineWriters.set(logger, batch);
  return logger;
}

/**
 * Log lines gathered in memory and written in batches of LOG_BATCH_BYTES (at least every LOG_FLUSH_MS, and on
 * exit), not one write per line: under load the access log cost a write per request. Each batch is written
 * synchronously (an asynchronous write through the thread pool and its callback cost the storefront read about
 * a microsecond per line more). The batching is ours, not sonic-boom's `minLength`: that one measures the byte
 * length of its whole pending buffer again for every line it adds (flattening the growing string each time).
 * Each line is encoded into the batch's buffer as it comes, so it dies young: lines kept as a string until the
 * flush were copied by every minor GC in between, then flattened, measured and encoded twice by sonic-boom.
 * A batch's buffer goes to sonic-boom (in buffer mode, which keeps it while a write waits) and a new one begins.
 */
class LineBatch {
  private buffer = Buffer.allocUnsafe(LOG_BUFFER_BYTES);
  private used = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly out: { write(data: Buffer): boolean; flushSync(): void }) {}

  write(line: string): boolean {
    // At most 3 bytes per UTF-16 unit.
    if (this.used + line.length * 3 > LOG_BUFFER_BYTES) {
      this.flush();
      if (line.length * 3 > LOG_BUFFER_BYTES) {
        this.out.write(Buffer.from(line, 'utf8'));
        return true;
      }
    }
    this.used += this.buffer.write(line, this.used, 'utf8');
    if (this.used >= LOG_BATCH_BYTES) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, LOG_FLUSH_MS);
      this.timer.unref();
    }
    return true;
  }

  /** pino's logger.flush(cb). */
  flush(done?: (err?: Error) => void): void {
    if (this.used > 0) {
      const batch = this.buffer.subarray(0, this.used);
      this.buffer = Buffer.allocUnsafe(LOG_BUFFER_BYTES);
      this.used = 0;
      this.out.write(batch);
    }
    done?.();
  }

  flushSync(): void {
    this.flush();
    this.out.flushSync();
  }
}

/** Where the loggers createLogger made write their lines (see writeInfoLine). */
const lineWriters = new WeakMap<Logger, { write(line: string): unknown }>();

/** The line pino would begin an info line with: level and time come first, then the logger's bindings. */
const INFO_PREFIX = '{"level":30,"time":';

/** Text JSON writes as it is between quotes: printable ASCII without `"` or `\`. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON.stringify of a string, without the call into V8's serializer for the usual plain text (ids, paths, names). */
function jsonText(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** A line of fixed keys and message that a hot path writes at info (see infoLine). */
export type InfoLineWriter = (logger: Logger, values: ReadonlyArray<string | number | null>) => void;

/**
 * The writer of info lines with `keys` (flat values: strings, finite numbers, null, given in the order of
 * `keys`) and `msg`, as `logger.info(fields, msg)` would write them (key order, secret keys censored, secrets
 * scrubbed from strings), for lines written on every request (the access log). Each key's text and whether
 * it is censored are decided here, once: pino's general path (its loop over serializers and stringifiers per
 * key, the log formatter's copy), and even a per-line check of each key, cost the storefront read more than
 * the rest of the line. `plainKeys` are those whose values are checked before to be printable ASCII without
 * `"`, a backslash or secrets (a validated request id): written as they are. A logger createLogger did not make
 * (tests' own) gets `logger.info`.
 */
export function infoLine(keys: readonly string[], msg: string, plainKeys: readonly string[] = []): InfoLineWriter {
  const prefixes = keys.map((key) => `,${JSON.stringify(key)}:`);
  const censored = keys.map((key) => REDACTED_KEYS.has(key.toLowerCase()));
  const plain = keys.map((key) => plainKeys.includes(key));
  const end = `,"msg":${jsonText(msg)}}\n`;
  const count = keys.length;
  // The line's beginning changes once a millisecond: its text is made once for all lines of that millisecond.
  let startedAt = -1;
  let startedBy: Logger | null = null;
  let start = '';
  return (logger, values) => {
    const out = lineWriters.get(logger);
    if (!out) {
      const fields: Record<string, string | number | null> = {};
      for (let i = 0; i < count; i++) fields[keys[i]!] = values[i]!;
      logger.info(fields, msg);
      return;
    }
    const now = Date.now();
    if (now !== startedAt || logger !== startedBy) {
      startedAt = now;
      startedBy = logger;
      start = INFO_PREFIX + now + (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
    }
    let line = start;
    for (let i = 0; i < count; i++) {
      const value = values[i]!;
      line += prefixes[i]!;
      if (censored[i]) line += `"${CENSOR}"`;
      else if (typeof value === 'string') line += plain[i] ? `"${value}"` : jsonText(scrubSecrets(value));
      else line += value === null || !Number.isFinite(value) ? 'null' : value;
    }
    out.write(line + end);
  };
}

/** Batched lines still waiting at exit are written then (pino registers this only for asynchronous streams). */
const unflushed = new Set<WeakRef<{ flushSync(): void }>>();

function flushOnExit(stream: { flushSync(): void }): void {
  if (unflushed.size === 0) {
    process.once('exit', () => {
      for (const ref of unflushed) {
        try {
          ref.deref()?.flushSync();
        } catch {
          // stdout is gone (a closed pipe): nothing more can be written
        }
      }
    });
  }
  unflushed.add(new WeakRef(stream));
}
