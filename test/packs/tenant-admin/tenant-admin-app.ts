import { startSmtpServer, type TestSmtpServer } from '../../helpers/smtp-server.js';
import { startTestApp, type TestApp, type TestAppOptions } from '../../helpers/test-app.js';

export const INVITE_LOGIN_URL = 'https://app.example.test/login';

export interface TenantAdminTestApp extends TestApp {
  smtp: TestSmtpServer;
}

/** The app with the product's packs (the Healthcare seed is CMS content), mailing to a real SMTP server on loopback. */
export async function startTenantAdminApp(options: TestAppOptions = {}): Promise<TenantAdminTestApp> {
  const smtp = await startSmtpServer();
  const t = await startTestApp({
    ...options,
    env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'platform@example.test', INVITE_LOGIN_URL, ...options.env },
  });
  const close = t.close.bind(t);
  return Object.assign(t, { smtp, async close() { await close(); await smtp.stop(); } });
}

let shared: Promise<TenantAdminTestApp> | null = null;

/** One tenant-admin app per test process; each test makes its own tenants. */
export function tenantAdminApp(): Promise<TenantAdminTestApp> {
  shared ??= startTenantAdminApp();
  return shared;
}

after(async () => {
  if (shared) await (await shared).close();
  shared = null;
});
