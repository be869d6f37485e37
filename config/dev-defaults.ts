/**
 * Defaults that make `npm start` and `npm run token` work on a fresh checkout. loadConfig applies them with
 * `{ devDefaults: true }` only to variables still unset after the environment and .env are merged, and only
 * when the merged NODE_ENV is not production; production refuses to start without real secrets.
 */
export const DEV_DEFAULTS: Readonly<Record<string, string>> = {
  TEST_API_KEY: 'dev-test-key',
  AUTH_JWT_SECRET: 'dev-jwt-secret-change-me-0123456789',
};
