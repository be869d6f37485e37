/**
 * Defaults that make `npm start` and `npm run token` work on a fresh checkout. Used outside production only;
 * config/index.ts refuses to start in production without real secrets.
 */
export const DEV_DEFAULTS: Record<string, string> = {
  TEST_API_KEY: 'dev-test-key',
  AUTH_JWT_SECRET: 'dev-jwt-secret-change-me-0123456789',
};

/** The environment with development defaults filled in where NODE_ENV is not production. */
export function withDevDefaults(env: Record<string, string | undefined>): Record<string, string | undefined> {
  if (env.NODE_ENV === 'production') return env;
  const out = { ...env };
  for (const [k, v] of Object.entries(DEV_DEFAULTS)) if (!out[k]) out[k] = v;
  return out;
}
