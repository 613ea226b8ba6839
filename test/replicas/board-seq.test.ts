// X-Board-Seq on every data answer of one server (what lets a client behind a load
// balancer tell which board state a node served): the board sequence at the answer, on
// 200s, HEADs and 304s of cached and uncached routes, on the push stream's SSE answer,
// and the snapshot's own version; the header moves with the board; errors carry none.
// The OpenAPI document declares it and CORS exposes it.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/** Status and headers of an SSE answer (the body never ends: the connection is dropped once they are in). */
function sseHeaders(port: number, path: string): Promise<http.IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      resolve(res.headers);
      req.destroy();
    });
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
  });
}

describe('X-Board-Seq', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  it('is the board seq on 200, HEAD and 304 answers, and moves with the board', async () => {
    const seq = String(t.app.engine.seq);
    for (const path of ['/api/v1/status', '/api/v1/odds?limit=5', '/api/v1/events?limit=5', '/api/v1/leagues', '/api/v1/edges?limit=5', '/api/v1/account/usage']) {
      const reply = await t.request(path);
      assert.equal(reply.status, 200, path);
      assert.equal(reply.headers['x-board-seq'], seq, path);
      assert.equal((await t.request(path, { method: 'HEAD' })).headers['x-board-seq'], seq, `HEAD ${path}`);
      const again = await t.request(path, { headers: { 'If-None-Match': String(reply.headers.etag) } });
      assert.equal(again.status, 304, path);
      assert.equal(again.headers['x-board-seq'], seq, `304 ${path}`);
    }
    const row = t.app.engine.store;
    let slot = 0;
    while (!row.isLive(slot)) slot++;
    t.app.engine.apply([{ op: 'remove', id: t.app.engine.idOf(slot) }]);
    const moved = await t.request('/api/v1/status');
    assert.equal(moved.headers['x-board-seq'], String(t.app.engine.seq));
    assert.notEqual(moved.headers['x-board-seq'], seq);
  });

  it('the snapshot answers its version; the push stream its seq at the subscription; errors none', async () => {
    const snapshot = await t.request('/api/v1/snapshot', { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(snapshot.status, 200);
    assert.match(String(snapshot.headers['x-board-seq']), /^\d+$/);
    const stream = await sseHeaders(t.port, '/api/v1/stream/sse?league=nba');
    assert.equal(stream['x-board-seq'], String(t.app.engine.seq));
    const missing = await t.request('/api/v1/nothing-here');
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['x-board-seq'], undefined);
    assert.match(String(missing.headers['access-control-expose-headers']), /X-Board-Seq/);
  });

  it('is declared in the OpenAPI document on every data answer', async () => {
    const document = JSON.parse((await t.request('/api/v1/openapi.json')).body.toString()) as {
      paths: Record<string, { get: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
      components: { headers: Record<string, unknown> };
    };
    assert.ok(document.components.headers['X-Board-Seq']);
    for (const [path, item] of Object.entries(document.paths)) {
      if (path.endsWith('openapi.json')) continue;
      assert.ok(item.get.responses['200']?.headers?.['X-Board-Seq'], `${path}: 200`);
      assert.ok(item.get.responses['304']?.headers?.['X-Board-Seq'], `${path}: 304`);
    }
  });
});
