// Headless Chromium (Debian's `chromium` package; .ci/run installs it) driven by
// playwright-core, for the tests and the bench that load the web pages over the real
// server. Every launch gets a fresh profile directory, removed on close. Requests to any
// origin but the server under test are refused and recorded, so a page that reaches for
// the internet fails its test instead of hanging on a machine without network.
//
//   const b = await openBrowser();
//   const page = await b.page(port);        // console errors and page errors are collected
//   await page.goto(`http://127.0.0.1:${port}/`);
//   assert.deepEqual(b.problems, []);
//   await b.close();
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  /** Console errors, uncaught page errors and refused foreign requests, in order. */
  problems: string[];
  /** A new page (1400x900) that only talks to 127.0.0.1:port. */
  page(port: number): Promise<Page>;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'odds-chromium-'));
  let context: BrowserContext;
  try {
    // playwright passes the profile to Chromium as --user-data-dir
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: FLAGS, viewport: { width: 1400, height: 900 } });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  const problems: string[] = [];
  return {
    context,
    problems,
    async page(port) {
      const page = await context.newPage();
      const origin = `http://127.0.0.1:${port}`;
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
        problems.push(`request outside the service: ${url}`);
        return route.abort();
      });
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
