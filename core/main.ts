import { ConfigError, loadConfig } from '../config/index.js';

/** npm start: load config, migrate, listen, print the URL and a curl example; stop gracefully on SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env, { dotenv: true, devDefaults: true });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78);
    }
    throw err;
  }
  // Imported here, not above: the packs are declared as the app's modules load, and a pack's mistake found
  // then (a malformed hook key) is reported in one line below instead of as a stack trace.
  const { createApp } = await import('./app.js');
  const app = await createApp(config);
  const server = await app.listen();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = `http://${config.host}:${port}`;
  const key = config.testApiKey;
  const lines = [
    '',
    `Headless platform listening on ${base}  (database: ${config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl : 'postgres'})`,
    `  health:  curl ${base}/api/v1/health`,
  ];
  if (key) {
    lines.push(
      `  test key (development only): ${key}`,
      `  try:     curl -X POST ${base}/api/v1/admin/tenants -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"id":"acme","name":"Acme"}'`,
      `           curl ${base}/api/v1/metadata/schemas -H 'Authorization: Bearer ${key}' -H 'X-Tenant-Id: acme'`,
      '  see README.md for the full quick start',
    );
  }
  console.log(lines.join('\n') + '\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'shutting down');
    // Requests get SHUTDOWN_TIMEOUT_MS, the dispatcher's attempts under way up to 20 s more.
    const limitMs = config.shutdownTimeoutMs + 25_000;
    const timer = setTimeout(() => {
      app.logger.error({ limitMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, limitMs);
    timer.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error('The service failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
