import { existsSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CONSOLE_DIST } from '../../core/admin-console/console-files.js';

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

/** A console tab on a running app, as the console's tests drive it. */
export interface ConsoleDriver {
  browser: Browser;
  page: Page;
  /** axe's serious and critical violations per screen checked (checkA11y). */
  violations: Record<string, string[]>;
  url(path: string): string;
  /** Opens a console path (`/erp.product`) and waits for its requests to settle. */
  go(path: string): Promise<void>;
  /** Judges the screen at rest with axe, keeping what it finds under `screen`. */
  checkA11y(screen: string): Promise<void>;
  /** Signs in with a pasted token and, given a tenant, picks it in the bar and waits for the dashboard to name it. */
  signIn(token: string, tenant?: string): Promise<void>;
  /** A screenshot of a failed test (in an afterEach: `this.currentTest`). */
  keepFailure(test: { state?: string; title: string } | undefined, prefix: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts Chromium with one 1280×860 tab on the console of the app at `baseUrl` (the console built first). */
export async function openConsole(baseUrl: string): Promise<ConsoleDriver> {
  ensureConsoleBuilt();
  const browser = await launchBrowser();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(20_000);
  const violations: Record<string, string[]> = {};
  const url = (path: string) => `${baseUrl}/admin${path}`;
  const go = async (path: string) => {
    await page.goto(url(path));
    await page.waitForLoadState('networkidle');
  };
  return {
    browser, page, violations, url, go,
    async checkA11y(screen) {
      await waitForRest(page);
      violations[screen] = await seriousViolations(page);
    },
    async signIn(token, tenant) {
      await go('/');
      await page.locator('#token').fill(token);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      if (!tenant) return;
      await page.locator('#tenant-picker').fill(tenant);
      await page.locator('#tenant-picker').press('Enter');
      await page.getByTestId('dashboard-tenant').filter({ hasText: tenant }).waitFor();
    },
    async keepFailure(test, prefix) {
      if (test?.state === 'failed') await screenshot(page, `${prefix}-failed-${test.title.slice(0, 40).replace(/\W+/g, '-')}`);
    },
    close: () => browser.close(),
  };
}

/** The screens with serious or critical violations (`screen: rule, …`); empty when every checked screen passed. */
export function screensWithViolations(violations: Record<string, string[]>): string[] {
  return Object.entries(violations).filter(([, v]) => v.length).map(([screen, v]) => `${screen}: ${v.join('; ')}`);
}

/**
 * The hooks of a console suite that works on one tenant: before, `start` brings the app up (and whatever the suite
 * seeds) and the console signs in with `token` on its tenant; after each failed test a screenshot; after, both
 * close. Reads of the returned holder are valid from the first test on.
 */
export function consoleSuite<App extends { baseUrl: string; close(): Promise<void> }>(
  prefix: string, token: string, start: () => Promise<{ app: App; tenant: string }>,
): { c: ConsoleDriver; app: App; tenant: string } {
  const suite = {} as { c: ConsoleDriver; app: App; tenant: string };
  before(async function () {
    this.timeout(180_000);
    Object.assign(suite, await start());
    suite.c = await openConsole(suite.app.baseUrl);
    await suite.c.signIn(token, suite.tenant);
  });
  afterEach(async function () {
    await suite.c?.keepFailure(this.currentTest, prefix);
  });
  after(async () => {
    await suite.c?.close();
    await suite.app?.close();
  });
  return suite;
}
