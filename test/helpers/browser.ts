import { existsSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CONSOLE_DIST } from '../../core/admin-console/console-files.js';
import { createTenant, startTestApp, type TestApp } from './test-app.js';
import { TEST_KEY } from './tokens.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(process.cwd(), 'test-artifacts');

/** Headless Chromium (Debian's), started once per test file. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The console is built by `npm install`; a checkout installed with --ignore-scripts builds it here once. */
export function ensureConsoleBuilt(): void {
  if (existsSync(join(CONSOLE_DIST, 'index.html'))) return;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-admin.ts'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('building the admin console failed');
}

/** axe-core's serious and critical violations on the page as it is now (rule id: the elements it names). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

/** A screenshot into test-artifacts/admin/ (the docs copy a few of them). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = join(ARTIFACTS, 'admin');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

/**
 * Waits until the page is at rest (no animation for a quarter of a second: a menu closing or a notification fading
 * in is half transparent for a moment), so that axe judges what a person sees.
 */
export async function waitForRest(page: Page): Promise<void> {
  const still = async () => (await page.evaluate('document.getAnimations().length')) === 0;
  const deadline = Date.now() + 5_000;
  for (;;) {
    if (await still()) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (await still()) return;
    }
    if (Date.now() > deadline) throw new Error('the page did not come to rest (animations still running after 5 s)');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A signed-in console in headless Chromium: a test app, a tenant of its own, the test key pasted in, the tenant picked. */
export interface ConsoleSession { t: TestApp; browser: Browser; page: Page; tenant: string }

export async function openConsole(prefix: string, viewport = { width: 1280, height: 860 }): Promise<ConsoleSession> {
  ensureConsoleBuilt();
  const t = await startTestApp();
  const tenant = await createTenant(t, prefix);
  const browser = await launchBrowser();
  const page = await (await browser.newContext({ viewport })).newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${t.baseUrl}/admin/`);
  await page.waitForLoadState('networkidle');
  await page.locator('#token').fill(TEST_KEY);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.locator('#tenant-picker').fill(tenant);
  await page.locator('#tenant-picker').press('Enter');
  await page.getByTestId('dashboard-tenant').filter({ hasText: tenant }).waitFor();
  return { t, browser, page, tenant };
}
