// The signal stream's WebSocket (/api/v1/stream/signals/ws) on the real app, on the
// transport TRANSPORT names (test/run.ts runs it on both):
// - a steam move arrives on every door at once: the WebSocket's JSON frame is the SSE
//   event's data with op and the subscription's id in front, its MessagePack frame the
//   same object, each equal to the /steam record;
// - the typed client's live screen (client.signalStream) holds what /best-prices
//   answers, from its full image through a tick;
// - a bad filter is refused as the SSE route refuses it (the same sentence, the
//   message's field named), and a subscribe past STREAM_MAX_SUBSCRIPTIONS with
//   too_many_subscriptions, opening nothing;
// - keyless connections count with the odds stream's against STREAM_MAX_ANONYMOUS_CONNECTIONS;
// - a client that stops reading is dropped past STREAM_BUFFER_BYTES: slow_consumer, then close 1008.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { unpack } from 'msgpackr';
import { WebSocket } from 'ws';
import { OddsClient } from '../../client/index.ts';
import { decimalToAmerican } from '../../engine/model.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import type { OddsRowJson } from '../helpers/bruteForce.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';
import { openSocket, openSse, type Opened } from '../stream/openStreams.ts';

type Message = Record<string, any>;

/** A WebSocket to the signal stream, keeping every message (binary frames decoded from MessagePack, marked __binary). */
class SignalSocket {
  readonly messages: Message[] = [];
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const message = (isBinary ? unpack(data) : JSON.parse(data.toString('utf8'))) as Message;
      if (isBinary) message.__binary = true;
      message.__raw = data;
      this.messages.push(message);
    });
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    ws.on('error', () => {});
  }

  static open(port: number, localAddress = '127.0.0.1'): Promise<SignalSocket> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/stream/signals/ws`, { perMessageDeflate: false, localAddress });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new SignalSocket(ws)));
      ws.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  async next(match: (message: Message) => boolean, timeoutMs = 10_000): Promise<Message> {
    let found: Message | undefined;
    const ok = await eventually(() => (found = this.messages.find(match)) !== undefined, timeoutMs);
    assert.ok(ok, `no matching message within ${timeoutMs} ms; last: ${JSON.stringify(this.messages.slice(-3).map(({ __raw, ...m }) => m)).slice(0, 500)}`);
    return found!;
  }

  close(): void {
    this.ws.terminate();
  }
}

/** An SSE connection to the signal stream: its events' parsed data as they come. */
function openSseEvents(port: number, path: string): Promise<{ events: { event: string; data: string }[]; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      const events: { event: string; data: string }[] = [];
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) events.push({ event, data });
        }
      });
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', () => {});
    req.end();
  });
}

describe('signal stream over a WebSocket', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
  });
  const rows = (): OddsRowJson[] => boardRows(t.app.engine, 'all') as OddsRowJson[];

  it('a steam move: the same bytes as the SSE event behind op and id, in JSON and MessagePack, equal to /steam', async () => {
    const sharp = rows().find((r) => r.sportsbook === 'pinnacle' && r.market === 'MONEYLINE' && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined && r.priceDecimal > 1.6 && r.priceDecimal < 2.4)!;
    const socket = await SignalSocket.open(t.port);
    const sse = await openSseEvents(t.port, `/api/v1/stream/signals?topic=steam&event_id=${sharp.eventId}`);
    try {
      socket.send({ op: 'subscribe', id: 'j', topic: 'steam', filter: { eventId: [sharp.eventId] } });
      socket.send({ op: 'subscribe', id: 'm', topic: 'steam', filter: { eventId: [sharp.eventId] }, format: 'msgpack' });
      const subscribed = await socket.next((m) => m.op === 'subscribed' && m.id === 'm');
      assert.equal(subscribed.topic, 'steam');
      assert.equal(subscribed.__binary, true);
      t.clock.advance(1000);
      const engine = t.app.engine;
      engine.apply([{ op: 'price', slot: engine.slotOf(sharp.id), priceAmerican: decimalToAmerican(1 / (1 / sharp.priceDecimal! + 0.04)), suspended: false }]);
      const json = await socket.next((m) => m.op === 'signal' && m.id === 'j');
      const packed = await socket.next((m) => m.op === 'signal' && m.id === 'm');
      assert.ok(await eventually(() => sse.events.length > 0, 5000), 'the SSE event');
      const event = sse.events[0]!;
      assert.equal(event.event, 'steam');
      // the WebSocket frame is the SSE data with op and id first
      assert.equal((json.__raw as Buffer).toString('utf8'), `{"op":"signal","id":"j",${event.data.slice(1)}`);
      const { __raw: _raw, __binary: _binary, ...fromPacked } = packed;
      assert.deepEqual(fromPacked, { op: 'signal', id: 'm', ...JSON.parse(event.data) });
      const { body } = await t.call('/api/v1/steam', `/api/v1/steam?event_id=${sharp.eventId}&limit=1`);
      assert.deepEqual(JSON.parse(event.data), { topic: 'steam', move: body.data[0] });
    } finally {
      socket.close();
      sse.close();
    }
  });

  it('the typed client keeps the best_price screen of an event equal to /best-prices, through its full image and a tick', async () => {
    const row = rows().find((r) => r.sportsbook === 'draftkings' && r.market === 'TOTAL' && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined)!;
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const signals = await client.signalStream();
    try {
      const screen = await signals.subscribe({ topic: 'best_price', filter: { eventId: [row.eventId] } });
      const route = async () => (await t.call('/api/v1/best-prices', `/api/v1/best-prices?event_id=${row.eventId}&limit=1000`)).body.data as { id: string }[];
      const byId = (records: { id: string }[]) => [...records].sort((a, b) => (a.id < b.id ? -1 : 1));
      assert.ok(await eventually(() => screen.messages > 0, 5000), 'the full image within a push');
      assert.deepEqual(byId(screen.records), byId(await route()));
      const before = screen.messages;
      t.clock.advance(1000);
      t.app.engine.apply([{ op: 'price', slot: t.app.engine.slotOf(row.id), priceAmerican: decimalToAmerican(row.priceDecimal! + 0.5), suspended: false }]);
      assert.ok(await eventually(() => screen.messages > before, 5000), 'the tick is pushed');
      assert.deepEqual(byId(screen.records), byId(await route()));
      screen.unsubscribe();
    } finally {
      signals.close();
    }
  });

  it('a bad filter is refused with the SSE route\'s sentence; a bad message is answered, never crashes', async () => {
    const socket = await SignalSocket.open(t.port);
    try {
      socket.send({ op: 'subscribe', id: 'a', topic: 'ev', minEv: 50 });
      const refused = await socket.next((m) => m.op === 'status' && m.id === 'a');
      assert.equal(refused.code, 'invalid_subscription');
      assert.equal(refused.param, 'minEv');
      const sse = await t.request('/api/v1/stream/signals?topic=ev&min_ev=50');
      assert.equal(sse.status, 400);
      assert.equal(refused.detail, JSON.parse(sse.body.toString()).detail.replaceAll('min_ev', 'minEv'));
      socket.send({ op: 'subscribe', id: 'b', topic: 'nope' });
      assert.equal((await socket.next((m) => m.op === 'status' && m.id === 'b')).param, 'topic');
      socket.send({ op: 'subscribe', id: 'c', topic: 'steam', filter: { team: ['x'] } });
      assert.equal((await socket.next((m) => m.op === 'status' && m.id === 'c')).param, 'filter.team');
      socket.ws.send('not json');
      await socket.next((m) => m.op === 'status' && m.id === undefined);
      socket.send({ op: 'heartbeat' });
      await socket.next((m) => m.op === 'heartbeat');
      assert.equal(socket.closed, null, 'still open');
    } finally {
      socket.close();
    }
  });
});

describe('signal stream WebSocket limits (issue 28\'s per-connection caps)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { STREAM_MAX_SUBSCRIPTIONS: '20', STREAM_MAX_ANONYMOUS_CONNECTIONS: '3', STREAM_BUFFER_BYTES: String(64 * 1024) } });
  });
  after(async () => {
    await t.close();
  });

  it('a subscribe past STREAM_MAX_SUBSCRIPTIONS is answered too_many_subscriptions and opens nothing; unsubscribing frees a place', async () => {
    const socket = await SignalSocket.open(t.port);
    try {
      const ids = Array.from({ length: 21 }, (_, i) => `s${i}`);
      for (const id of ids) socket.send({ op: 'subscribe', id, topic: 'steam' });
      const refused = await socket.next((m) => m.op === 'status' && m.id === 's20');
      assert.equal(refused.code, 'too_many_subscriptions');
      assert.match(refused.detail, /at most 20/);
      assert.equal(socket.messages.filter((m) => m.op === 'subscribed').length, 20);
      socket.send({ op: 'unsubscribe', id: 's0' });
      socket.send({ op: 'subscribe', id: 's20', topic: 'steam' });
      await socket.next((m) => m.op === 'subscribed' && m.id === 's20');
      socket.send({ op: 'unsubscribe', id: 's0' });
      assert.equal((await socket.next((m) => m.op === 'status' && m.id === 's0')).code, 'invalid_subscription');
    } finally {
      socket.close();
    }
  });

  it('keyless connections count with the odds stream\'s, per address: the next handshake is 429', async () => {
    const open: Opened[] = [];
    const sockets: SignalSocket[] = [];
    try {
      sockets.push(await SignalSocket.open(t.port, '127.0.0.3'));
      open.push(await openSocket(t.port, '127.0.0.3'));
      open.push(await openSse(t.port, '127.0.0.3', '/api/v1/stream/signals?topic=steam'));
      assert.deepEqual(open.map((o) => o.status), [101, 200]);
      await assert.rejects(SignalSocket.open(t.port, '127.0.0.3'), /429/);
      const odds = await openSocket(t.port, '127.0.0.3');
      assert.equal(odds.status, 429);
      assert.equal(JSON.parse(odds.body).code, 'too_many_connections');
      // another address has its own places
      sockets.push(await SignalSocket.open(t.port, '127.0.0.4'));
      // a closed signal socket frees its place
      sockets.shift()!.close();
      let again: Opened | null = null;
      assert.ok(await eventually(async () => (again = await openSocket(t.port, '127.0.0.3')).status === 101, 5000), 'the place is free again');
      open.push(again!);
    } finally {
      for (const o of open) o.close();
      for (const s of sockets) s.close();
    }
  });

  it('a client that stops reading is told slow_consumer and closed (1008) past STREAM_BUFFER_BYTES', async () => {
    const socket = await SignalSocket.open(t.port, '127.0.0.5');
    try {
      // twenty full images of every +EV quote (each request its own channel) far outgrow 64 KiB and the sockets' buffers
      socket.ws.pause();
      for (let i = 0; i < 20; i++) socket.send({ op: 'subscribe', id: `ev${i}`, topic: 'ev', minEv: -1 + i / 100 });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      socket.ws.resume();
      assert.ok(await eventually(() => socket.closed !== null, 20_000), 'closed by the service');
      assert.equal(socket.closed!.code, 1008);
      const status = socket.messages.find((m) => m.op === 'status');
      assert.equal(status?.code, 'slow_consumer');
      assert.match(status.detail, /STREAM_BUFFER_BYTES/);
    } finally {
      socket.close();
    }
  });
});
