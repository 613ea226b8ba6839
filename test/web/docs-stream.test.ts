// GET /docs/stream in headless Chromium: the push stream's reference, rendered from the
// AsyncAPI document the service publishes, shows every message of every channel (by its
// name, with each payload field) and every shared schema, fetching nothing from outside.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openBrowser, type TestBrowser } from '../../fixtures/harness/browser.ts';

type Json = Record<string, any>;

describe('push stream reference page', () => {
  let t: TestApp;
  let b: TestBrowser;
  before(async () => {
    t = await startTestApp({ env: { REQUIRE_KEY: '1' } }); // a reference page needs no key
    b = await openBrowser();
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('renders every message of the AsyncAPI document with its payload fields', async () => {
    const { body: doc } = await t.call('/api/v1/asyncapi.json', '/api/v1/asyncapi.json');
    const schemas = doc.components.schemas as Record<string, Json>;
    const expected = new Map<string, string[]>(); // message name -> payload fields
    for (const channel of Object.values(doc.channels as Record<string, Json>)) {
      for (const message of Object.values(channel.messages as Record<string, Json>)) {
        const payload = message.payload.$ref === undefined ? message.payload : schemas[String(message.payload.$ref).split('/').pop()!]!;
        expected.set(message.name, Object.keys(payload.properties ?? {}));
      }
    }
    assert.ok(expected.size >= 7, `messages in the document: ${[...expected.keys()].join()}`);

    const page = await b.page(t.port);
    await page.goto(`http://127.0.0.1:${t.port}/docs/stream`);
    await page.waitForSelector('#asyncapi[data-state="rendered"]', { timeout: 30_000 });
    const rendered = await page.$$eval('.message[data-message]', (sections) =>
      sections.map((s) => ({ name: (s as HTMLElement).dataset.message!, title: s.querySelector('h4')?.textContent ?? '', fields: [...s.querySelectorAll('table.fields tbody tr td:first-child')].map((td) => td.textContent ?? '') })),
    );
    const missing: string[] = [];
    for (const [name, fields] of expected) {
      const shown = rendered.filter((r) => r.name === name && r.title.includes(name));
      if (shown.length === 0) missing.push(`${name}: not rendered`);
      for (const section of shown) if (JSON.stringify(section.fields) !== JSON.stringify(fields)) missing.push(`${name}: fields ${section.fields.join()} instead of ${fields.join()}`);
    }
    assert.deepEqual(missing, []);
    const schemaIds = await page.$$eval('section.schema[id]', (sections) => sections.map((s) => s.id));
    assert.deepEqual(schemaIds, Object.keys(schemas).map((name) => `schema-${name}`));
    assert.equal(await page.$eval('h1', (h) => h.textContent), `${doc.info.title} ${doc.info.version}`);
    // the servers are where this page came from, not the document's default localhost:8080
    const servers = await page.$$eval('li[data-server] code', (codes) => codes.map((c) => c.textContent));
    assert.deepEqual(servers, [`ws://127.0.0.1:${t.port}`, `http://127.0.0.1:${t.port}`]);
    assert.deepEqual(b.problems, []);
  });
});
