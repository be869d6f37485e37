import pino, { type Logger } from 'pino';
import type { Config } from '../config/index.js';

/** Paths never written to logs. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.SMTP_PASSWORD',
  '*.secret',
  '*.token',
];

export function createLogger(config: Config): Logger {
  const pretty = !config.isProduction && process.stdout.isTTY && config.logLevel !== 'silent';
  return pino({
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'headless-platform' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } } : {}),
  });
}
