// What the transport interface offers the next features, on whichever transport this
// run uses (TRANSPORT; `npm test` runs this file on both): POST bodies under a byte
// cap, WebSocket routes (messages both ways, backpressure, topics, refusal, close),
// no server banner, and the answers node:http gives to requests uWS drops.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { WebSocket } from 'ws';
import { HttpError } from '../../http/errors.ts';
import { defineRoute } from '../../http/router.ts';
import { defineSocketRoute, type SocketConnection } from '../../http/socketRoute.ts';
import type { Authenticator } from '../../http/auth.ts';
import { startTestServer, httpRequest, type TestServer } from '../helpers/server.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

const MAX_BODY = 64 * 1024;

/** Answers with what it received: byte count, first and last byte, the parsed query. */
const ingest = defineRoute({
  path: '/api/v1/test/ingest',
  method: 'POST',
  maxBodyBytes: MAX_BODY,
  auth: 'key',
  response: 'Status',
  query: [],
  handle(req) {
    const body = req.body!;
    if (body.length > 0 && body[0] === 0x21) throw new HttpError('invalid_parameter', 'a body may not start with !');
    return { kind: 'data', data: [{ totalMarkets: body.length, sportsbooks: body.length === 0 ? 0 : body[body.length - 1]! }], updated: 0 };
  },
});
const status = defineRoute({
  path: '/api/v1/status',
  auth: 'none',
  response: 'Status',
  query: [],
  handle: () => ({ kind: 'data', data: [{ totalMarkets: 1, sportsbooks: 1 }], updated: 0 }),
});

/** Keys are 'good' (allowed) or anything else (401); no key on a 'key' route: 401 too. */
const authenticator: Authenticator = {
  check(key, routeAuth) {
    if (routeAuth === 'none' || key === 'good') return { ok: true, headers: [['X-RateLimit-Limit', '10']] };
    return { ok: false, code: key === null ? 'missing_api_key' : 'invalid_api_key', detail: 'no' };
  },
};

interface Session {
  opened: number;
  messages: Array<{ text: string; isBinary: boolean }>;
  closes: Array<{ code: number; reason: string }>;
  drains: number;
  last: SocketConnection<{ apiKey: string | null; room: string }> | null;
}
const session: Session = { opened: 0, messages: [], closes: [], drains: 0, last: null };

/** Echoes each message back (same kind), 'join' subscribes to the room topic, 'flood' sends until backpressure, 'bye' ends. */
const echo = defineSocketRoute({
  path: '/api/v1/test/ws',
  auth: 'key',
  maxPayloadBytes: 1024,
  maxBackpressureBytes: 64 * 1024 * 1024,
  accept(req) {
    const room = new URLSearchParams(req.query).get('room') ?? 'lobby';
    if (room === 'closed') throw new HttpError('read_only', 'room closed');
    return { apiKey: req.apiKey, room };
  },
  open(ws) {
    session.opened++;
    session.last = ws;
  },
  message(ws, data, isBinary) {
    const text = data.toString('utf8');
    session.messages.push({ text, isBinary });
    if (text === 'join') {
      ws.subscribe(ws.data.room);
      ws.send('joined', false);
    } else if (text === 'flood') {
      const chunk = Buffer.alloc(256 * 1024, 7);
      let sent = 0;
      let result = ws.send(chunk, true);
      while (result === 'sent' && sent < 400) {
        sent++;
        result = ws.send(chunk, true);
      }
      ws.send(JSON.stringify({ result, buffered: ws.getBufferedAmount() }), false);
    } else if (text === 'bye') {
      ws.end(4000, 'bye now');
    } else {
      ws.send(data, isBinary);
    }
  },
  drain() {
    session.drains++;
  },
  close(_ws, code, reason) {
    session.closes.push({ code, reason: reason.toString('utf8') });
  },
});

function connect(port: number, path: string, headers: Record<string, string> = { 'X-Api-Key': 'good' }): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** The next message, as text or Buffer. */
function nextMessage(ws: WebSocket): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve) => ws.once('message', (data: Buffer, isBinary: boolean) => resolve({ data, isBinary })));
}

/** The status a refused handshake got. */
function refusedWith(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.once('error', () => undefined);
  });
}

/** POSTs `body` in the given pieces (chunked when contentLength is false). */
function post(port: number, path: string, pieces: readonly Buffer[], options: { contentLength?: boolean; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const total = pieces.reduce((sum, piece) => sum + piece.length, 0);
    const headers: Record<string, string> = { 'X-Api-Key': 'good', 'Content-Type': 'application/octet-stream', ...options.headers };
    if (options.contentLength !== false) headers['Content-Length'] = String(total);
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    // The server may answer 413 and close before the whole body is sent.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    let index = 0;
    const writeNext = () => {
      if (index === pieces.length) return req.end();
      req.write(pieces[index++], () => setImmediate(writeNext));
    };
    writeNext();
  });
}

/** Raw bytes on one connection; resolves with what came back when the server closes (or after the first answer). */
function rawExchange(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.on('data', (data) => {
      received += data.toString('latin1');
      const headEnd = received.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      if (headEnd !== -1 && length !== undefined && received.length >= headEnd + 4 + Number(length)) socket.destroy();
    });
    socket.on('close', () => resolve(received));
    socket.on('error', () => undefined);
  });
}

describe('transport interface', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ routes: [ingest, status], sockets: [echo], authenticator });
  });
  after(() => t.close());

  it('names the transport it runs on, and the one TRANSPORT asked for', () => {
    assert.ok(t.server.transport.length > 0);
    if (process.env.TRANSPORT === 'node' || process.env.TRANSPORT === 'uws') assert.equal(t.server.transportKind, process.env.TRANSPORT);
    process.stdout.write(`# transport: ${t.server.transport}\n`);
  });

  it('does not advertise the server software', async () => {
    const reply = await httpRequest(t.port, '/api/v1/status');
    assert.equal(reply.status, 200);
    for (const name of Object.keys(reply.headers)) assert.ok(!/uwebsockets|server|x-powered-by/i.test(name), name);
  });

  describe('POST bodies', () => {
    it('hands the whole body to the route, read from many chunks', async () => {
      const pieces = Array.from({ length: 20 }, (_, i) => Buffer.alloc(3000, i + 1));
      const reply = await post(t.port, '/api/v1/test/ingest', pieces);
      assert.equal(reply.status, 200, reply.body);
      assert.deepEqual(JSON.parse(reply.body).data, [{ totalMarkets: 60_000, sportsbooks: 20 }]);
      assert.equal(reply.headers['x-ratelimit-limit'], '10');
    });

    it('reads a chunked body without Content-Length, and an empty one', async () => {
      const chunked = await post(t.port, '/api/v1/test/ingest', [Buffer.from('ab'), Buffer.from('cd')], { contentLength: false });
      assert.equal(chunked.status, 200, chunked.body);
      assert.deepEqual(JSON.parse(chunked.body).data, [{ totalMarkets: 4, sportsbooks: 0x64 }]);
      const empty = await post(t.port, '/api/v1/test/ingest', []);
      assert.equal(empty.status, 200, empty.body);
      assert.deepEqual(JSON.parse(empty.body).data, [{ totalMarkets: 0, sportsbooks: 0 }]);
    });

    it('answers 413 payload_too_large for a declared length over the cap, without reading the body', async () => {
      const reply = await post(t.port, '/api/v1/test/ingest', [Buffer.alloc(MAX_BODY + 1)]);
      assert.equal(reply.status, 413);
      assert.equal(JSON.parse(reply.body).code, 'payload_too_large');
    });

    it('answers 413 when a chunked body grows past the cap', async () => {
      const pieces = Array.from({ length: 10 }, () => Buffer.alloc(16 * 1024, 1));
      const reply = await post(t.port, '/api/v1/test/ingest', pieces, { contentLength: false });
      assert.equal(reply.status, 413);
      assert.equal(JSON.parse(reply.body).code, 'payload_too_large');
      const after = await httpRequest(t.port, '/api/v1/status');
      assert.equal(after.status, 200, 'still serving');
    });

    it('authenticates before reading, and turns a route HttpError into its answer', async () => {
      const refused = await post(t.port, '/api/v1/test/ingest', [Buffer.from('x')], { headers: { 'X-Api-Key': 'bad' } });
      assert.equal(refused.status, 401);
      assert.equal(JSON.parse(refused.body).code, 'invalid_api_key');
      const invalid = await post(t.port, '/api/v1/test/ingest', [Buffer.from('!x')]);
      assert.equal(invalid.status, 400);
      assert.equal(JSON.parse(invalid.body).code, 'invalid_parameter');
    });

    it('answers GET on a POST route, and POST on a GET route, 405 with the right Allow', async () => {
      const get = await httpRequest(t.port, '/api/v1/test/ingest', { headers: { 'X-Api-Key': 'good' } });
      assert.equal(get.status, 405);
      assert.equal(get.headers.allow, 'POST, OPTIONS');
      const wrong = await post(t.port, '/api/v1/status', [Buffer.from('x')]);
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.allow, 'GET, HEAD, OPTIONS');
      const preflight = await httpRequest(t.port, '/api/v1/test/ingest', { method: 'OPTIONS' });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers['access-control-allow-methods'], 'POST, OPTIONS');
    });
  });

  describe('WebSockets', () => {
    it('opens, echoes text and binary messages, and closes with the code sent', async () => {
      const openedBefore = session.opened;
      const ws = await connect(t.port, '/api/v1/test/ws?room=a');
      await eventually(() => session.opened === openedBefore + 1);
      assert.equal(session.last!.data.apiKey, 'good');
      assert.equal(session.last!.data.room, 'a');
      const text = nextMessage(ws);
      ws.send('hello');
      assert.deepEqual(await text, { data: Buffer.from('hello'), isBinary: false });
      const binary = nextMessage(ws);
      ws.send(Buffer.from([1, 2, 3]));
      assert.deepEqual(await binary, { data: Buffer.from([1, 2, 3]), isBinary: true });
      const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
      const closesBefore = session.closes.length;
      ws.send('bye');
      assert.deepEqual(await closed, { code: 4000, reason: 'bye now' });
      assert.ok(await eventually(() => session.closes.length === closesBefore + 1), 'the route saw the close');
      assert.equal(session.last!.send('late', false), 'dropped', 'sending after close is dropped, not a crash');
    });

    it('publishes to the connections subscribed to a topic only', async () => {
      const inRoom = await connect(t.port, '/api/v1/test/ws?room=odds');
      const elsewhere = await connect(t.port, '/api/v1/test/ws?room=other');
      for (const ws of [inRoom, elsewhere]) {
        const joined = nextMessage(ws);
        ws.send('join');
        assert.equal((await joined).data.toString(), 'joined');
      }
      const received: string[] = [];
      elsewhere.on('message', (data: Buffer) => received.push(`other:${data.toString()}`));
      const got = nextMessage(inRoom);
      assert.equal(t.server.publish('odds', Buffer.from('tick 1'), false), true);
      assert.equal((await got).data.toString(), 'tick 1');
      assert.equal(t.server.publish('nobody-listens', 'x', false), false);
      // a round trip on `elsewhere` after the publish: had it been sent there, it would have arrived first
      const echoed = nextMessage(elsewhere);
      elsewhere.send('ping');
      await echoed;
      assert.deepEqual(received, ['other:ping']);
      inRoom.close();
      elsewhere.close();
    });

    it('reports backpressure to a sender that outruns a paused reader, then drains', async () => {
      const ws = await connect(t.port, '/api/v1/test/ws');
      const socket = (ws as unknown as { _socket: net.Socket })._socket;
      socket.pause();
      const drainsBefore = session.drains;
      ws.send('flood');
      // the reader is paused: the report is queued behind the flood; resume to read it
      await eventually(() => session.messages.some((m) => m.text === 'flood'));
      const report = new Promise<{ result: string; buffered: number }>((resolve) =>
        ws.on('message', (data: Buffer, isBinary: boolean) => {
          if (!isBinary) resolve(JSON.parse(data.toString()));
        }),
      );
      socket.resume();
      const { result, buffered } = await report;
      assert.equal(result, 'backpressure');
      assert.ok(buffered > 0, `buffered ${buffered}`);
      assert.ok(await eventually(() => session.drains > drainsBefore), 'drain was called once the queue went out');
      ws.close();
    });

    it('closes a connection that sends a message over maxPayloadBytes', async () => {
      const ws = await connect(t.port, '/api/v1/test/ws');
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      ws.on('error', () => undefined);
      ws.send(Buffer.alloc(4096));
      const code = await closed;
      assert.ok(code === 1009 || code === 1006, `close code ${code}`);
      const still = await httpRequest(t.port, '/api/v1/status');
      assert.equal(still.status, 200);
    });

    it('refuses a handshake without a valid key, or one the route refuses, with the error body', async () => {
      const missing = await refusedWith(t.port, '/api/v1/test/ws', {});
      assert.equal(missing.status, 401);
      assert.equal(JSON.parse(missing.body).code, 'missing_api_key');
      const refused = await refusedWith(t.port, '/api/v1/test/ws?room=closed', { 'X-Api-Key': 'good' });
      assert.equal(refused.status, 403);
      assert.equal(JSON.parse(refused.body).code, 'read_only');
    });
  });

  describe('requests the parser rejects', () => {
    // On uWS the front sends these to node:http (front.ts); every transport answers them
    // (test/http/conformance.test.ts has the whole table), and keeps serving.
    async function answered(reply: string, answer: RegExp): Promise<void> {
      assert.match(reply, answer);
      assert.equal((await httpRequest(t.port, '/api/v1/status')).status, 200);
    }

    it('answers 414 uri_too_long for a 200 KB URL', async () => {
      const reply = await rawExchange(t.port, `GET /api/v1/status?x=${'a'.repeat(200_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await answered(reply, /^HTTP\/1\.1 414 [^]*"code":"uri_too_long"/);
    });

    it('answers 414 for a URL over 8 KiB that fits the header limit', async () => {
      const reply = await rawExchange(t.port, `GET /api/v1/status?x=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.match(reply, /^HTTP\/1\.1 414 /);
    });

    it('answers 431 for a 200 KB header and for 300 headers', async () => {
      const big = await rawExchange(t.port, `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(200_000)}\r\n\r\n`);
      await answered(big, /^HTTP\/1\.1 431 [^]*"code":"headers_too_large"/);
      let many = 'GET /api/v1/status HTTP/1.1\r\nHost: x\r\n';
      for (let i = 0; i < 300; i++) many += `X-H${i}: ${i}\r\n`;
      await answered(await rawExchange(t.port, `${many}\r\n`), /^HTTP\/1\.1 431 /);
    });

    it('answers 400 bad_request for a malformed request line', async () => {
      const reply = await rawExchange(t.port, 'GET /api/v1/status HTTP/1.1 trailing\r\nHost: x\r\n\r\n');
      await answered(reply, /^HTTP\/1\.1 400 [^]*"code":"bad_request"/);
    });

    it('answers an HTTP/1.0 request without Host', async () => {
      const reply = await rawExchange(t.port, 'GET /api/v1/status HTTP/1.0\r\n\r\n');
      await answered(reply, /^HTTP\/1\.[01] 200 /);
    });

    it('answers 405 method_not_allowed with Allow for PROPFIND and other extension methods', async () => {
      for (const method of ['PROPFIND', 'MKCOL', 'PURGE']) {
        const reply = await rawExchange(t.port, `${method} /api/v1/odds HTTP/1.1\r\nHost: x\r\n\r\n`);
        assert.match(reply, /^HTTP\/1\.1 405 /, method);
        assert.match(reply, /\r\nAllow: GET, HEAD, OPTIONS\r\n/i, method);
        assert.match(reply, /"code":"method_not_allowed"/, method);
      }
    });

    it('answers 405 with Allow for a method the parser does not know', async () => {
      const reply = await rawExchange(t.port, 'BREW /api/v1/status HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(reply, /^HTTP\/1\.1 405 [^]*\r\nAllow: GET, HEAD, OPTIONS\r\n/);
    });
  });
});
