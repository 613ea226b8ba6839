// GET /docs in headless Chromium: Redoc renders every operation of the OpenAPI document
// the service publishes, with its path and its curl example as a code block, and nothing
// is fetched from outside the service, on a service that requires keys.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openBrowser, type TestBrowser } from '../../fixtures/harness/browser.ts';

describe('API reference page', () => {
  let t: TestApp;
  let b: TestBrowser;
  before(async () => {
    t = await startTestApp({ env: { REQUIRE_KEY: '1' } }); // the reference needs no key
    b = await openBrowser();
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('renders every path of the OpenAPI document', async () => {
    const { body: doc } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    const page = await b.page(t.port);
    await page.goto(`http://127.0.0.1:${t.port}/docs`);
    await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 30_000 });
    const paths = Object.entries(doc.paths as Record<string, { get: { operationId: string } }>);
    assert.ok(paths.length > 20, 'the document lists the API');
    const rendered = await page.evaluate((ops) => {
      const missing: string[] = [];
      for (const [path, operationId] of ops) {
        const sections = [...document.querySelectorAll(`[data-section-id="operation/${operationId}"]`)];
        if (!sections.some((section) => (section.textContent ?? '').includes(path))) missing.push(path);
        else if (!sections.some((section) => [...section.querySelectorAll('pre code, pre')].some((code) => (code.textContent ?? '').includes('curl ')))) missing.push(`${path}: no curl example rendered`);
      }
      return missing;
    }, paths.map(([path, item]) => [path, item.get.operationId] as [string, string]));
    assert.deepEqual(rendered, [], 'paths without a rendered operation or example');
    assert.deepEqual(b.problems, []);
  });
});
