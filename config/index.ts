import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import dotenv from 'dotenv';
import { fromRoot } from '../core/base/package-root.js';
import { DEV_DEFAULTS } from './dev-defaults.js';

/**
 * The only reader of process.env. Validates the environment against config.schema.json,
 * names the bad variable, and returns a deep-frozen Config that is passed to createApp.
 */

export type NodeEnv = 'development' | 'test' | 'production';

export interface Config {
  readonly nodeEnv: NodeEnv;
  readonly isProduction: boolean;
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly databasePoolMax: number;
  readonly migrateOnStart: boolean;
  readonly testApiKey: string | null;
  readonly auth: {
    readonly jwtSecret: string | null;
    readonly jwksUri: string | null;
    /** An unknown kid refetches the JWKS at most once per this interval (30 s); lower only in tests. */
    readonly jwksCooldownMs: number;
    readonly issuer: string | null;
    readonly audience: string | null;
    readonly tenantClaim: string;
    /** The admin console's public OIDC client id at the identity provider (AUTH_ISSUER); null: no OIDC sign-in. */
    readonly consoleClientId: string | null;
  };
  /**
   * Payments (CONTRACT 15.3, 15.6): where the stripe package calls (null: Stripe's own API), how long a card order
   * waits for its payment, and how long a bank transfer order waits for its money.
   */
  readonly payments: {
    readonly stripeApiBase: { readonly protocol: 'http' | 'https'; readonly host: string; readonly port: number } | null;
    readonly paymentTimeoutMinutes: number;
    readonly manualPaymentTimeoutDays: number;
  };
  readonly signingSecret: string;
  readonly settingsEncryptionKey: string;
  readonly publicBaseUrl: string;
  readonly platformBaseDomain: string;
  /** Largest body of POST /data/{ns}/{schema}/import (CONTRACT.md 12.3). */
  readonly importMaxBytes: number;
  /** How long a write waits while its schema migrates before 503 unavailable (CONTRACT.md 12.1: 30 s). */
  readonly schemaWriteWaitMs: number;
  /** Records a schema migration rewrites per transaction (CONTRACT.md 12.1). */
  readonly schemaMigrateBatch: number;
  /** Revisions of records older than this many days are deleted, except a live record's newest (CONTRACT.md 16.3). */
  readonly revisionRetentionDays: number;
  /** Audit log entries older than this many days are deleted (CONTRACT.md 16.4). */
  readonly auditRetentionDays: number;
  /** Live change streams (CONTRACT.md 12.4): the comment line's interval, and how often other processes' events are looked for. */
  readonly changes: { readonly heartbeatMs: number; readonly pollMs: number };
  readonly storage: {
    readonly driver: 'local' | 's3';
    readonly dir: string;
    readonly maxUploadBytes: number;
    readonly s3: {
      readonly endpoint: string | null;
      readonly bucket: string | null;
      readonly region: string;
      readonly accessKeyId: string | null;
      readonly secretAccessKey: string | null;
      readonly forcePathStyle: boolean;
    };
  };
  /** First values of the platform SMTP settings, until a superadmin changes them. */
  readonly smtp: {
    readonly host: string | null;
    readonly port: number | null;
    readonly secure: boolean | null;
    readonly user: string | null;
    readonly password: string | null;
    readonly from: string | null;
  };
  readonly frontendUrl: string | null;
  readonly inviteLoginUrl: string | null;
  readonly allowPrivateNetworkFetch: boolean;
  /** Behind a load balancer: the client address is the nearest proxy's X-Forwarded-For hop (Koa `proxy`). */
  readonly trustProxy: boolean;
  readonly llm: { readonly baseUrl: string | null; readonly apiKey: string | null; readonly model: string | null };
  readonly logLevel: string;
  readonly metricsToken: string | null;
  /** /metrics without a token in production: answered only when this is set on purpose (else 404). */
  readonly metricsPublic: boolean;
  readonly rateLimits: {
    /** Requests a minute per client address on the public runtime (/public/...). */
    readonly publicPerMinute: number;
    /** POST /events/publish a minute per tenant. */
    readonly eventsPublishPerMinute: number;
  };
  /** How long a SIGTERM waits for requests in flight before the process exits. */
  readonly shutdownTimeoutMs: number;
  readonly keycloak: {
    readonly baseUrl: string | null;
    readonly realm: string | null;
    readonly clientId: string | null;
    readonly clientSecret: string | null;
  };
  readonly dispatcher: {
    readonly enabled: boolean;
    readonly intervalMs: number;
    /** Per attempt (15 s); lower only in tests. */
    readonly timeoutMs: number;
    /** Attempts under way at once per process. */
    readonly concurrency: number;
    /** First retry delay; doubles per attempt (with jitter) up to 6 h. */
    readonly retryBaseMs: number;
    /** How long a delivery is retried before it is marked failed (72 h). */
    readonly retryWindowMs: number;
    /** How long a claimed delivery stays reserved for the process that claimed it (at least the timeout + 5 s). */
    readonly claimTtlMs: number;
    /** Finished deliveries, their attempts and delivered events are deleted after this many days. */
    readonly retentionDays: number;
  };
  /** First-party events from storefronts (POST /public/tenant/{id}/events) per client address and minute. */
  readonly publicEventsRateLimitPerMinute: number;
  /** Runs the abandoned-cart recovery for every tenant with crm this often (minutes); null: never (the default). */
  readonly cartRecoveryIntervalMinutes: number | null;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

/** Development-only defaults for secrets; refused in production (see validateProductionSecrets). */
export const DEVELOPMENT_SIGNING_SECRET = 'development-signing-secret-change-me-0123456789';
export const DEVELOPMENT_ENCRYPTION_KEY = 'development-encryption-key-change-me-0123456789';

const schemaPath = fromRoot('config', 'config.schema.json');
const configSchema = JSON.parse(readFileSync(schemaPath, 'utf8')) as {
  properties: Record<string, { type: string; default?: unknown }>;
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false }));
const validateEnv = ajv.compile(configSchema);

function coerce(name: string, raw: string, type: string): unknown {
  const value = raw.trim();
  if (type === 'integer') {
    if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
    return Number(value);
  }
  if (type === 'number') {
    if (!/^-?\d+(\.\d+)?$/.test(value)) throw new ConfigError(name, `must be a number, got "${raw}"`);
    return Number(value);
  }
  if (type === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(value)) return true;
    if (/^(false|0|no|off)$/i.test(value)) return false;
    throw new ConfigError(name, `must be true or false, got "${raw}"`);
  }
  return value;
}

export interface LoadConfigOptions {
  /** Read a .env file first: `true` for ./.env in the working directory (npm start does; tests do not), or a path. */
  dotenv?: boolean | string;
  /**
   * Fill in the development defaults (config/dev-defaults.ts) for variables still unset once the environment
   * and .env are merged, and only when the merged NODE_ENV is not production.
   */
  devDefaults?: boolean;
}

/**
 * Builds the Config from an environment map (process.env by default). Empty strings count as unset.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, options: LoadConfigOptions = {}): Config {
  let source: Record<string, string | undefined> = env;
  if (options.dotenv) {
    const fromFile: Record<string, string> = {};
    const path = typeof options.dotenv === 'string' ? options.dotenv : undefined;
    dotenv.config({ processEnv: fromFile, quiet: true, ...(path ? { path } : {}) } as dotenv.DotenvConfigOptions);
    source = { ...fromFile, ...env };
  }
  if (options.devDefaults && source.NODE_ENV !== 'production') {
    source = { ...source };
    for (const [name, value] of Object.entries(DEV_DEFAULTS)) if (!source[name]) source[name] = value;
  }

  const typed: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(configSchema.properties)) {
    const raw = source[name];
    if (raw === undefined || raw === '') continue;
    typed[name] = coerce(name, raw, prop.type);
  }
  if (!validateEnv(typed)) {
    const first = validateEnv.errors![0];
    const variable = first.instancePath.replace(/^\//, '') || String(first.params?.missingProperty ?? 'environment');
    throw new ConfigError(variable, first.message ?? 'is invalid');
  }

  const v = typed as Record<string, any>;
  const nodeEnv = v.NODE_ENV as NodeEnv;
  const isProduction = nodeEnv === 'production';
  if (isProduction) {
    // Every missing secret at once, so that one start tells the operator all of them.
    const missing = [
      ...(!v.SIGNING_SECRET ? ['SIGNING_SECRET (at least 32 characters)'] : []),
      ...(!v.SETTINGS_ENCRYPTION_KEY ? ['SETTINGS_ENCRYPTION_KEY (at least 32 characters)'] : []),
      ...(!v.AUTH_JWT_SECRET && !v.AUTH_JWKS_URI ? ['AUTH_JWKS_URI or AUTH_JWT_SECRET'] : []),
    ];
    if (missing.length) throw new ConfigError(missing.join('; '), `${missing.length > 1 ? 'are' : 'is'} required in production`);
  }
  if (v.STORAGE_DRIVER === 's3' && !v.S3_BUCKET) throw new ConfigError('S3_BUCKET', 'is required when STORAGE_DRIVER is s3');
  if (isProduction && v.ALLOW_PRIVATE_NETWORK_FETCH) {
    throw new ConfigError('ALLOW_PRIVATE_NETWORK_FETCH', 'must not be true in production: it turns off the outbound fetch guard (tests only)');
  }
  if ((v.LLM_BASE_URL && !v.LLM_MODEL)) throw new ConfigError('LLM_MODEL', 'is required when LLM_BASE_URL is set');

  const config: Config = {
    nodeEnv,
    isProduction,
    port: v.PORT,
    host: v.HOST,
    databaseUrl: v.DATABASE_URL,
    databasePoolMax: v.DATABASE_POOL_MAX,
    migrateOnStart: v.MIGRATE_ON_START,
    testApiKey: isProduction ? null : (v.TEST_API_KEY ?? null),
    auth: {
      jwtSecret: v.AUTH_JWT_SECRET ?? null,
      jwksUri: v.AUTH_JWKS_URI ?? null,
      jwksCooldownMs: v.AUTH_JWKS_COOLDOWN_MS,
      issuer: v.AUTH_ISSUER ?? null,
      audience: v.AUTH_AUDIENCE ?? null,
      tenantClaim: v.AUTH_TENANT_CLAIM,
      consoleClientId: v.ADMIN_OIDC_CLIENT_ID ?? null,
    },
    payments: { stripeApiBase: v.STRIPE_API_BASE ? stripeApiBase(v.STRIPE_API_BASE) : null, paymentTimeoutMinutes: v.PAYMENT_TIMEOUT_MINUTES,
      manualPaymentTimeoutDays: v.MANUAL_PAYMENT_TIMEOUT_DAYS },
    signingSecret: v.SIGNING_SECRET ?? DEVELOPMENT_SIGNING_SECRET,
    settingsEncryptionKey: v.SETTINGS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY,
    publicBaseUrl: (v.PUBLIC_BASE_URL ?? `http://${v.HOST}:${v.PORT}`).replace(/\/+$/, ''),
    platformBaseDomain: v.PLATFORM_BASE_DOMAIN,
    importMaxBytes: v.IMPORT_MAX_BYTES,
    schemaWriteWaitMs: v.SCHEMA_WRITE_WAIT_MS,
    schemaMigrateBatch: v.SCHEMA_MIGRATE_BATCH,
    revisionRetentionDays: v.REVISION_RETENTION_DAYS,
    auditRetentionDays: v.AUDIT_RETENTION_DAYS,
    changes: { heartbeatMs: v.CHANGES_HEARTBEAT_MS, pollMs: v.CHANGES_POLL_MS },
    storage: {
      driver: v.STORAGE_DRIVER,
      dir: v.STORAGE_DIR,
      maxUploadBytes: v.STORAGE_MAX_UPLOAD_BYTES,
      s3: {
        endpoint: v.S3_ENDPOINT ?? null,
        bucket: v.S3_BUCKET ?? null,
        region: v.S3_REGION,
        accessKeyId: v.S3_ACCESS_KEY_ID ?? null,
        secretAccessKey: v.S3_SECRET_ACCESS_KEY ?? null,
        forcePathStyle: v.S3_FORCE_PATH_STYLE,
      },
    },
    smtp: {
      host: v.SMTP_HOST ?? null,
      port: v.SMTP_PORT ?? null,
      secure: v.SMTP_SECURE ?? null,
      user: v.SMTP_USER ?? null,
      password: v.SMTP_PASSWORD ?? null,
      from: v.SMTP_FROM ?? null,
    },
    frontendUrl: v.FRONTEND_URL ?? null,
    inviteLoginUrl: v.INVITE_LOGIN_URL ?? null,
    allowPrivateNetworkFetch: v.ALLOW_PRIVATE_NETWORK_FETCH,
    trustProxy: v.TRUST_PROXY,
    llm: { baseUrl: v.LLM_BASE_URL ?? null, apiKey: v.LLM_API_KEY ?? null, model: v.LLM_MODEL ?? null },
    logLevel: v.LOG_LEVEL,
    metricsToken: v.METRICS_TOKEN ?? null,
    metricsPublic: v.METRICS_PUBLIC,
    rateLimits: { publicPerMinute: v.PUBLIC_RATE_LIMIT_PER_MINUTE, eventsPublishPerMinute: v.EVENTS_PUBLISH_RATE_LIMIT_PER_MINUTE },
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    keycloak: {
      baseUrl: v.KEYCLOAK_BASE_URL ?? null,
      realm: v.KEYCLOAK_REALM ?? null,
      clientId: v.KEYCLOAK_CLIENT_ID ?? null,
      clientSecret: v.KEYCLOAK_CLIENT_SECRET ?? null,
    },
    dispatcher: {
      enabled: v.DISPATCHER_ENABLED,
      intervalMs: v.DISPATCHER_INTERVAL_MS,
      timeoutMs: v.DISPATCHER_TIMEOUT_MS,
      concurrency: v.DISPATCHER_CONCURRENCY,
      retryBaseMs: v.DISPATCHER_RETRY_BASE_MS,
      retryWindowMs: v.DISPATCHER_RETRY_WINDOW_MS,
      claimTtlMs: v.DISPATCHER_CLAIM_TTL_MS,
      retentionDays: v.OUTBOX_RETENTION_DAYS,
    },
    publicEventsRateLimitPerMinute: v.PUBLIC_EVENTS_RATE_LIMIT_PER_MINUTE,
    cartRecoveryIntervalMinutes: v.CART_RECOVERY_INTERVAL_MINUTES ?? null,
  };
  return deepFreeze(config);
}

/** STRIPE_API_BASE as the stripe package takes it: protocol, host and port of an origin (a path, query or user: ConfigError). */
function stripeApiBase(value: string): { protocol: 'http' | 'https'; host: string; port: number } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('STRIPE_API_BASE', 'must be an origin such as https://api.stripe.com');
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username) throw new ConfigError('STRIPE_API_BASE', 'must be an origin, without a path');
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { protocol, host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443 };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
