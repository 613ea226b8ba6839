// The engine behind a real nginx (Debian's package), in both configurations users meet:
// the reference one (docs/nginx.conf: HTTP/1.1 upstream keep-alive, unbuffered SSE and
// snapshot, WebSocket upgrade for /api/v1/stream) and nginx's defaults (a bare
// proxy_pass: HTTP/1.0 upstream with Connection: close, buffering on). HTTP, snapshot,
// SSE and stream requests through nginx get what the engine answers directly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { httpRequest } from '../helpers/server.ts';
import { nginxAvailable, NGINX, startNginx, type NginxSetup, type RunningNginx } from '../helpers/nginx.ts';
import { StreamTestClient } from '../stream/streamClient.ts';

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The first Server-Sent Event's name and data, and the response's content type. */
function firstEvent(port: number, path: string): Promise<{ status: number; contentType: string; event: string; data: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end).split('\n');
          buffer = buffer.slice(end + 2);
          const event = block.find((line) => line.startsWith('event: '))?.slice(7) ?? 'message';
          const data = block.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('');
          if (data === '') continue; // a comment or retry: line
          req.destroy();
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), event, data: JSON.parse(data) });
          return;
        }
      });
    });
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error('no event within 15 s')));
  });
}

const available = nginxAvailable();

describe(`behind nginx (${NGINX})`, { skip: available ? false : `${NGINX} is not installed (.ci/run installs Debian's nginx)` }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  for (const setup of ['reference', 'default'] as const satisfies readonly NginxSetup[]) {
    describe(setup === 'reference' ? 'the reference configuration (docs/nginx.conf)' : "nginx's default proxy settings (HTTP/1.0 upstream)", () => {
      let nginx: RunningNginx;
      before(async () => {
        nginx = await startNginx(setup, t.port);
      });
      after(() => nginx.close());

      it('status, odds, HEAD, a conditional GET and errors: what the engine answers directly', async () => {
        for (const path of ['/api/v1/status', '/api/v1/odds?limit=20', '/api/v1/odds?league=nba&odds_format=decimal']) {
          const direct = await httpRequest(t.port, path, { headers: { 'Accept-Encoding': 'gzip' } });
          const proxied = await httpRequest(nginx.port, path, { headers: { 'Accept-Encoding': 'gzip' } });
          assert.equal(proxied.status, 200, `${path}: ${nginx.errors()}`);
          assert.equal(sha(proxied.body), sha(direct.body), path);
          assert.equal(proxied.headers.etag, direct.headers.etag, path);
        }
        const odds = await httpRequest(nginx.port, '/api/v1/odds?limit=20');
        const again = await httpRequest(nginx.port, '/api/v1/odds?limit=20', { headers: { 'If-None-Match': String(odds.headers.etag) } });
        assert.equal(again.status, 304);
        const head = await httpRequest(nginx.port, '/api/v1/status', { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.body.length, 0);
        const missing = await httpRequest(nginx.port, '/api/v1/nope');
        assert.equal(missing.status, 404);
        assert.equal(JSON.parse(missing.body.toString('utf8')).code, 'not_found');
        const propfind = await httpRequest(nginx.port, '/api/v1/odds', { method: 'PROPFIND' });
        assert.equal(propfind.status, 405);
        assert.equal(propfind.headers.allow, 'GET, HEAD, OPTIONS');
      });

      it('many requests in a row, several at once: every one answered 200', async () => {
        const paths = Array.from({ length: 40 }, (_, i) => `/api/v1/odds?limit=${1 + (i % 7)}`);
        const replies = await Promise.all(paths.map((path) => httpRequest(nginx.port, path)));
        assert.deepEqual(replies.map((reply) => reply.status), paths.map(() => 200), nginx.errors());
      });

      it('the snapshot: the same bytes as from the engine directly', async () => {
        for (const query of ['', '?include_history=true']) {
          const direct = await httpRequest(t.port, `/api/v1/snapshot${query}`, { headers: { 'Accept-Encoding': 'gzip' } });
          const proxied = await httpRequest(nginx.port, `/api/v1/snapshot${query}`, { headers: { 'Accept-Encoding': 'gzip' } });
          assert.equal(proxied.status, 200, nginx.errors());
          assert.equal(proxied.body.length, direct.body.length);
          assert.equal(sha(proxied.body), sha(direct.body));
        }
      });

      it('Server-Sent Events: the image arrives as it is written', async () => {
        const first = await firstEvent(nginx.port, '/api/v1/stream/sse?league=nba');
        assert.equal(first.status, 200);
        assert.match(first.contentType, /^text\/event-stream/);
        assert.equal(first.event, 'image');
      });

      if (setup === 'reference') {
        it('the WebSocket stream: a subscription gets its image and answers heartbeats', async () => {
          const client = await StreamTestClient.open(nginx.port);
          try {
            client.subscribe('nba', { filter: { league: ['nba'] } });
            await client.next((m) => m.id === 'nba' && m.op === 'image' && m.segment === 'end', 15_000);
            await client.sync();
          } finally {
            client.close();
          }
        });
      } else {
        it('the WebSocket stream: the handshake gets an HTTP answer (nginx does not pass Upgrade by default), never a hang', async () => {
          const status = await new Promise<number>((resolve, reject) => {
            const ws = new WebSocket(`ws://127.0.0.1:${nginx.port}/api/v1/stream`, { perMessageDeflate: false });
            ws.once('unexpected-response', (_req, res) => {
              resolve(res.statusCode ?? 0);
              ws.terminate();
            });
            ws.once('open', () => reject(new Error('opened through a proxy that drops Upgrade')));
            ws.once('error', () => undefined);
          });
          assert.ok(status >= 400 && status < 500, `status ${status}`);
        });
      }
    });
  }
});
