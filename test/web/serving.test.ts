// The web pages over plain HTTP: / and /docs are HTML naming content-hashed assets,
// revalidated by ETag; the assets are cached for good; unknown assets are JSON 404s; and
// none of it appears in the OpenAPI document (pages are not API).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('web pages over HTTP', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const assetsOf = (html: string): string[] => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);

  it('serves / as HTML with its bundled script and stylesheet', async () => {
    const reply = await t.request('/');
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['content-type']), /^text\/html/);
    assert.equal(reply.headers['cache-control'], 'no-cache');
    const html = reply.body.toString();
    assert.match(html, /Content-Security-Policy/);
    const assets = assetsOf(html);
    assert.ok(assets.some((a) => /\/assets\/board-[0-9a-f]{12}\.js$/.test(a)), html);
    assert.ok(assets.some((a) => /\/assets\/board-[0-9a-f]{12}\.css$/.test(a)), html);
    assert.ok(assets.some((a) => /\/assets\/favicon-[0-9a-f]{12}\.svg$/.test(a)), `the site icon is linked: ${html}`);
    for (const path of assets) {
      const asset = await t.request(path);
      assert.equal(asset.status, 200, path);
      assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable', path);
      assert.match(String(asset.headers['content-type']), path.endsWith('.js') ? /^text\/javascript/ : path.endsWith('.svg') ? /^image\/svg\+xml$/ : /^text\/css/);
      assert.ok(asset.body.length > 100, path);
    }
  });

  it('answers 304 to a matching If-None-Match and HEAD without a body', async () => {
    const first = await t.request('/docs');
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await t.request('/docs', { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const head = await t.request('/docs', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers['content-length']), first.body.length);
    assert.equal(head.body.length, 0);
  });

  it('serves the Redoc bundle on /docs without its CDN logo', async () => {
    const html = (await t.request('/docs')).body.toString();
    const redoc = assetsOf(html).find((a) => a.includes('redoc.standalone'));
    assert.ok(redoc, html);
    const body = (await t.request(redoc)).body.toString();
    assert.ok(body.length > 500_000);
    assert.ok(!body.includes('cdn.redoc.ly'));
  });

  it('answers an unknown asset with a JSON 404', async () => {
    const reply = await t.request('/assets/board-000000000000.js');
    assert.equal(reply.status, 404);
    const body = JSON.parse(reply.body.toString());
    assert.equal(body.code, 'not_found');
  });

  it('leaves the pages out of the OpenAPI document', async () => {
    const { body } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    const paths = Object.keys(body.paths);
    // the document lists the API (so the check below has something to check) ...
    for (const route of ['/api/v1/odds', '/api/v1/snapshot', '/api/v1/events/{eventId}/odds']) assert.ok(paths.includes(route), `${route} in ${paths.join(', ')}`);
    // ... and none of the pages or their assets
    for (const path of paths) assert.ok(path.startsWith('/api/v1/'), path);
    for (const page of ['/', '/docs', '/assets/{name}', '/favicon.ico']) assert.ok(!paths.includes(page), page);
  });
});
