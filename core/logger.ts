import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config/index.js';

/** Paths never written to logs (pino redaction; `*` is one level of nesting). */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers.authorization',
  '*.authorization',
  'password',
  '*.password',
  '*.pass',
  'SMTP_PASSWORD',
  '*.SMTP_PASSWORD',
  'smtp.password',
  '*.smtp.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  '*.apiKey',
  '*.clientSecret',
  '*.secretAccessKey',
  '*.signingSecret',
];

const CENSOR = '[redacted]';

/** Query parameters that carry signatures or credentials in signed URLs and callbacks. */
const SECRET_QUERY = /([?&](?:signature|sig|token|access_token|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"'<>]*/gi;
const BEARER = /(\bBearer\s+)[A-Za-z0-9._~+/=-]+/g;

/** Removes signatures, tokens and bearer credentials from a string (URLs, error messages, stacks). */
export function scrubSecrets(text: string): string {
  if (!text.includes('=') && !/bearer/i.test(text)) return text;
  return text.replace(SECRET_QUERY, `$1${CENSOR}`).replace(BEARER, `$1${CENSOR}`);
}

/** Scrubs string values of a log object, two levels deep (URLs logged by fetch, storage, deliveries). */
function scrubObject(value: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const [key, inner] of Object.entries(value)) {
    let scrubbed = inner;
    if (typeof inner === 'string') scrubbed = scrubSecrets(inner);
    else if (depth < 1 && inner && typeof inner === 'object' && !Array.isArray(inner) && !(inner instanceof Error)) {
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
 * The service's logger: JSON lines (pretty in a terminal outside production), LOG_LEVEL, secrets
 * redacted by path and scrubbed from URLs and error texts. `destination` is for tests and tools.
 */
export function createLogger(config: Config, destination?: DestinationStream): Logger {
  const pretty = !destination && !config.isProduction && process.stdout.isTTY && config.logLevel !== 'silent';
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: CENSOR },
    base: { service: 'headless-platform' },
    serializers: { err: serializeError, error: serializeError },
    formatters: { log: (object) => scrubObject(object) },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
