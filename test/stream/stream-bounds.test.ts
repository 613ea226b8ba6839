// Bounds per push-stream connection: clients that never read but keep sending
// whole-board subscribes stay under the buffered-bytes cap (STREAM_BUFFER_BYTES; an image
// counts against it and goes at its reader's pace) and are dropped as slow consumers or
// refused, never left growing the process; a connection holds at most
// STREAM_MAX_SUBSCRIPTIONS subscriptions (status too_many_subscriptions); an address holds
// at most STREAM_MAX_ANONYMOUS_CONNECTIONS connections without a key, WebSocket and SSE
// counted together (429 too_many_connections), keyed by the client's own address (through
// the uWS front too: a client on 127.0.0.2 is not counted with 127.0.0.1), and a closed
// one frees its place.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { StreamTestClient } from './streamClient.ts';
import { openSocket, openSse, type Opened } from './openStreams.ts';

const CAP = 256 * 1024;
/** An image segment (at most 1,000 rows) may sit past the cap once: its own length. */
const SEGMENT_ALLOWANCE = 1024 * 1024;

describe('push-stream bounds per connection', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', env: { STREAM_BUFFER_BYTES: String(CAP), STREAM_MAX_SUBSCRIPTIONS: '5', STREAM_MAX_ANONYMOUS_CONNECTIONS: '4' } });
  });
  after(() => t.close());

  it('paused sockets flooding whole-board subscribes stay under the cap', async () => {
    const sockets = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<WebSocket>((resolve, reject) => {
            const ws = new WebSocket(`ws://127.0.0.1:${t.port}/api/v1/stream`, { perMessageDeflate: false });
            ws.once('open', () => resolve(ws));
            ws.once('error', reject);
          }),
      ),
    );
    const closed = sockets.map(() => false);
    sockets.forEach((ws, i) => {
      ws.on('close', () => (closed[i] = true));
      ws.on('error', () => {});
      ws.pause(); // never reads: what the service sends piles up in the kernel, then in its own queue
    });
    let peak = 0;
    let n = 0;
    const rssBefore = process.memoryUsage().rss;
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      for (const [i, ws] of sockets.entries()) {
        if (!closed[i] && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ op: 'subscribe', id: `s${n}`, filter: {} }));
      }
      n++;
      t.app.simulator.step(20);
      await new Promise((resolve) => setTimeout(resolve, 20));
      peak = Math.max(peak, t.app.stream.stats().queuedBytesMax);
    }
    const stats = t.app.stream.stats();
    assert.ok(peak <= CAP + SEGMENT_ALLOWANCE, `a connection queued ${peak} bytes (cap ${CAP})`);
    assert.ok(stats.subscriptions <= 3 * 5, `${stats.subscriptions} subscriptions open`);
    assert.ok(stats.slowConsumerDrops + stats.refusedSubscriptions > 0, `neither dropped nor refused: ${JSON.stringify(stats)}`);
    // the test process holds the paused clients' kernel buffers too; what matters is that nothing grew by hundreds of MB
    assert.ok(process.memoryUsage().rss - rssBefore < 300 * 1024 * 1024, `resident memory grew by ${process.memoryUsage().rss - rssBefore} bytes`);
    for (const ws of sockets) ws.terminate();
    assert.ok(await eventually(() => t.app.stream.stats().clients === 0, 10_000));
  });

  it('a subscribe past STREAM_MAX_SUBSCRIPTIONS is answered too_many_subscriptions and opens nothing', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      for (let i = 0; i < 6; i++) client.subscribe(`s${i}`, { filter: { league: ['nba'] } });
      const status = await client.next((m) => m.op === 'status' && m.id === 's5');
      assert.equal(status.code, 'too_many_subscriptions');
      assert.match(status.detail, /at most 5/);
      await eventually(() => [0, 1, 2, 3, 4].every((i) => client.state(`s${i}`).images === 1), 20_000);
      assert.equal(client.state('s5').images, 0);
      // unsubscribing one frees its place
      client.send({ op: 'unsubscribe', id: 's0' });
      client.subscribe('s6', { filter: { league: ['nba'] } });
      await eventually(() => client.state('s6').images === 1, 20_000);
    } finally {
      client.close();
    }
  });

  it('an address holds at most STREAM_MAX_ANONYMOUS_CONNECTIONS connections without a key: the next handshake is 429', async () => {
    assert.ok(await eventually(() => t.app.stream.stats().clients === 0, 10_000));
    const open = await Promise.all([0, 1, 2, 3].map(() => StreamTestClient.open(t.port)));
    try {
      const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${t.port}/api/v1/stream`);
        ws.once('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        ws.once('open', () => reject(new Error('the fifth connection was accepted')));
        ws.once('error', () => {});
      });
      assert.equal(refused.status, 429);
      assert.equal(JSON.parse(refused.body).code, 'too_many_connections');
      // one closes: its place is free again
      open.pop()!.close();
      await eventually(() => t.app.stream.stats().clients === 3, 10_000);
      open.push(await StreamTestClient.open(t.port));
    } finally {
      for (const client of open) client.close();
    }
  });

  it('SSE streams count with WebSocket connections against the per-address cap, by the client\'s real address', async () => {
    assert.ok(await eventually(() => t.app.stream.stats().clients === 0, 10_000));
    const open: Opened[] = [];
    try {
      for (const opener of [openSocket, openSse, openSocket, openSse]) {
        const opened = await opener(t.port);
        assert.ok(opened.status === 101 || opened.status === 200, `refused under the cap: ${opened.status} ${opened.body}`);
        open.push(opened);
      }
      // the fifth from 127.0.0.1 is refused whichever door it takes, with the same error body
      const sse = await openSse(t.port);
      const socket = await openSocket(t.port);
      assert.equal(sse.status, 429, sse.body);
      assert.equal(socket.status, 429, socket.body);
      assert.deepEqual(JSON.parse(sse.body), JSON.parse(socket.body));
      assert.equal(JSON.parse(sse.body).code, 'too_many_connections');
      // another address has its own count: the front relays the client's address, not its own
      for (const opener of [openSse, openSocket]) {
        const other = await opener(t.port, '127.0.0.2');
        assert.ok(other.status === 101 || other.status === 200, `127.0.0.2 refused: ${other.status} ${other.body}`);
        open.push(other);
      }
      // the signal stream (/stream/signals) is a push-stream connection too: refused past the cap
      const signals = await openSse(t.port, '127.0.0.1', '/api/v1/stream/signals?topic=steam');
      assert.equal(signals.status, 429, signals.body);
      assert.equal(JSON.parse(signals.body).code, 'too_many_connections');
      // an SSE stream that ends frees its place for either kind
      open[1]!.close();
      await eventually(() => t.app.stream.stats().clients === 5, 10_000);
      const again = await openSse(t.port, '127.0.0.1', '/api/v1/stream/signals?topic=steam');
      assert.equal(again.status, 200, again.body);
      open.push(again);
      // and an open signal stream holds its place: the next connection is refused
      const after = await openSocket(t.port);
      assert.equal(after.status, 429, after.body);
    } finally {
      for (const opened of open) opened.close();
    }
  });
});
