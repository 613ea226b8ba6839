// Large bodies streamed with backpressure: a slow reader gets every byte, a reader
// that hangs up mid-body costs nothing more, and the server keeps serving.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { defineRoute } from '../../http/router.ts';
import { bodyStreamStats } from '../../http/largeBody.ts';
import { startTestServer, httpRequest, type TestServer } from '../helpers/server.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

/** About 20 MB of JSON in uneven chunks, shared by every client. */
function buildChunks(): Buffer[] {
  const chunks: Buffer[] = [Buffer.from('{"rows":[')];
  const row = (i: number) => `{"id":"ev${i % 977}:book${i % 17}:TOTAL:FULL_OVER_${i}","priceAmerican":${-200 + (i % 400)},"pad":"${'x'.repeat(i % 50)}"}`;
  let i = 0;
  for (let c = 0; c < 40; c++) {
    const rows: string[] = [];
    const target = 400_000 + c * 3_001;
    let size = 0;
    while (size < target) {
      const text = row(i++);
      rows.push(text);
      size += text.length + 1;
    }
    chunks.push(Buffer.from((c === 0 ? '' : ',') + rows.join(',')));
  }
  chunks.push(Buffer.from(']}'));
  return chunks;
}

const CHUNKS = buildChunks();
const TOTAL = CHUNKS.reduce((sum, chunk) => sum + chunk.length, 0);
const DIGEST = createHash('sha256').update(Buffer.concat(CHUNKS)).digest('hex');
const ETAG = '"snapshot-test-1"';

const snapshot = defineRoute({
  path: '/api/v1/snapshot',
  auth: 'key',
  response: 'LargeDoc',
  responseKind: 'document',
  query: [],
  handle: () => ({ kind: 'large', chunks: CHUNKS, etag: ETAG, contentType: 'application/json' }),
});
const ping = defineRoute({
  path: '/api/v1/status',
  auth: 'none',
  response: 'Status',
  query: [],
  handle: () => ({ kind: 'data', data: [{ totalMarkets: 1, sportsbooks: 1 }], updated: 0 }),
});

/** Reads the whole response, pausing `pauseMs` after every `everyBytes`. Resolves with status, headers, byte count and digest. */
function slowRead(port: number, pauseMs: number, everyBytes: number): Promise<{ status: number; length: number; digest: string; contentLength: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/snapshot', agent: false }, (res) => {
      const hash = createHash('sha256');
      let length = 0;
      let sincePause = 0;
      res.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        length += chunk.length;
        sincePause += chunk.length;
        if (sincePause >= everyBytes) {
          sincePause = 0;
          res.pause();
          setTimeout(() => res.resume(), pauseMs);
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, length, digest: hash.digest('hex'), contentLength: res.headers['content-length'] }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describe('large bodies', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ routes: [snapshot, ping], openapi: { schemas: { LargeDoc: { type: 'object', required: ['rows'] } } } });
  });
  after(() => t.close());

  it('streams ~20 MB completely to a slow reader, with backpressure', async () => {
    assert.ok(TOTAL > 16_000_000, `${TOTAL} bytes`);
    const waitsBefore = bodyStreamStats.waits;
    const completedBefore = bodyStreamStats.completed;
    const result = await slowRead(t.port, 15, 1_000_000);
    assert.equal(result.status, 200);
    assert.equal(result.contentLength, String(TOTAL));
    assert.equal(result.length, TOTAL);
    assert.equal(result.digest, DIGEST);
    assert.ok(bodyStreamStats.waits > waitsBefore, 'the socket pushed back at least once');
    assert.equal(bodyStreamStats.completed, completedBefore + 1);
  });

  it('serves several readers at once from the same chunks', async () => {
    const results = await Promise.all([slowRead(t.port, 5, 4_000_000), slowRead(t.port, 0, 1 << 30), slowRead(t.port, 10, 2_000_000)]);
    for (const result of results) assert.equal(result.digest, DIGEST);
  });

  it('drops a reader that hangs up mid-body and keeps serving', async () => {
    const abortedBefore = bodyStreamStats.aborted;
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: t.port, path: '/api/v1/snapshot', agent: false }, (res) => {
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 2_000_000) {
            req.destroy();
            resolve();
          }
        });
      });
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(error)));
    });
    await eventually(() => bodyStreamStats.aborted !== abortedBefore);
    assert.equal(bodyStreamStats.aborted, abortedBefore + 1, 'the stream saw the abort');
    const status = await t.call('/api/v1/status', '/api/v1/status');
    assert.equal(status.reply.status, 200);
    const full = await slowRead(t.port, 0, 1 << 30);
    assert.equal(full.digest, DIGEST);
  });

  it('answers HEAD with the length and no body, and 304 to a matching If-None-Match', async () => {
    const head = await httpRequest(t.port, '/api/v1/snapshot', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], String(TOTAL));
    assert.equal(head.headers.etag, ETAG);
    assert.equal(head.body.length, 0);
    const notModified = await t.call('/api/v1/snapshot', '/api/v1/snapshot', { headers: { 'If-None-Match': ETAG } });
    assert.equal(notModified.reply.status, 304);
    assert.equal(notModified.reply.headers.etag, ETAG);
  });

  it('validates the streamed document against its schema', async () => {
    const { reply, body } = await t.call('/api/v1/snapshot', '/api/v1/snapshot');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['access-control-allow-origin'], '*');
    assert.ok(Array.isArray(body.rows) && body.rows.length > 100_000);
  });
});
