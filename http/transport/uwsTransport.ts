// The transport over a native uWebSockets.js binary (loadUws.ts). Its request and
// response objects go to the facade as they are (transport.ts follows their shape), so
// this file only adds what uWS does differently: large bodies by tryEnd/onWritable,
// request bodies by onData, WebSockets by app.ws, and no server banner. By default uWS
// listens on a private unix socket behind a front (front.ts) that owns the public port
// and serves what uWS's parser cannot through node:http; UWS_DIRECT=1 puts uWS on the
// port itself.
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket } from 'uws-btc-vision';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenError, listenFront, type Adopter, type ListeningFront } from './front.ts';
import type { Uws } from './loadUws.ts';
import { createNodeHttp, NodeTransport, type NodeHttp } from './nodeTransport.ts';
import { canonicalAddress, proxyV2Header } from './peerAddress.ts';
import { loadSocketCalls, type SocketCalls } from './socketAdoption.ts';
import { BODY_BYTES_PER_TURN } from './transport.ts';
import type {
  BodyReadResult,
  BodyStreamEvents,
  HeaderBlock,
  ListenOptions,
  ListeningTransport,
  ResponseStream,
  ResponseStreamEvents,
  SendResult,
  SocketConnection,
  Transport,
  TransportHandlers,
  TransportResponse,
  TransportSocketRoute,
} from './transport.ts';

export class UwsTransport implements Transport {
  readonly kind = 'uws' as const;
  private adoptionCheck: { ok: true; calls: SocketCalls } | { ok: false; reason: string } | undefined;
  /** Serves, through the front, the requests uWS would not answer right. */
  private readonly nodeTransport = new NodeTransport('node:http (behind the uWebSockets.js front)');
  /**
   * Where uWS learns the client's address: the connection's own peer (UWS_DIRECT=1), the
   * front's PROXY v2 header (the peer is then the front), or nowhere (a build that does
   * not read the header: peerAddress answers '').
   */
  private peerSource: 'socket' | 'proxy' | 'unknown' = 'socket';

  constructor(
    private readonly uws: Uws,
    readonly description: string,
  ) {
    // Without this every response carries `uWebSockets: 20`; we do not advertise the
    // server software. 'silent' is the binary's switch for that header (it keeps Date).
    (uws as unknown as { _cfg(key: string): void })._cfg('silent');
  }

  /**
   * uWS writes each writeHeader call as `name: value\r\n`, and every call crosses into
   * C++, a measurable share of a 304 (two calls fewer served ~6% more requests/s). So
   * the first header's value carries the others as CRLF-joined lines: one call, the
   * same bytes on the wire.
   */
  headerBlock(headers: readonly (readonly [string, string])[]): HeaderBlock {
    let value = headers[0]![1];
    for (let i = 1; i < headers.length; i++) value += `\r\n${headers[i]![0]}: ${headers[i]![1]}`;
    return [[headers[0]![0], value]];
  }

  /** The block is one joined header (headerBlock): the extra header rides on its value, so the whole set is one call into uWS. */
  writeHeaderBlock(res: TransportResponse, block: HeaderBlock, name: string, value: string): void {
    const joined = block[0]!;
    res.writeHeader(joined[0], `${joined[1]}\r\n${name}: ${value}`);
  }

  streamBody(res: TransportResponse, chunks: readonly Buffer[], total: number, events: BodyStreamEvents): void {
    const uwsRes = res as unknown as HttpResponse;
    const stream = new UwsBodyStream(uwsRes, chunks, total, events);
    uwsRes.onAborted(() => stream.abort());
    stream.pump();
  }

  peerAddress(res: TransportResponse): string {
    const uwsRes = res as unknown as HttpResponse;
    if (this.peerSource === 'unknown') return '';
    const raw = this.peerSource === 'proxy' ? uwsRes.getProxiedRemoteAddressAsText() : uwsRes.getRemoteAddressAsText();
    return canonicalAddress(Buffer.from(raw).toString('latin1'));
  }

  openStream(res: TransportResponse, events: ResponseStreamEvents): ResponseStream {
    const uwsRes = res as unknown as HttpResponse;
    let closed = false;
    // uWS keeps what the socket did not take and reports no count for an HTTP response:
    // the bytes written since the first refusal are the queue (an upper bound).
    let queued = 0;
    const close = () => {
      if (closed) return;
      closed = true;
      events.closed();
    };
    uwsRes.onAborted(close);
    return {
      write: (chunk) => {
        if (closed) return false;
        let ok = true;
        uwsRes.cork(() => {
          ok = uwsRes.write(chunk);
        });
        if (ok && queued === 0) return true;
        if (queued === 0) {
          uwsRes.onWritable(() => {
            queued = 0;
            if (!closed) events.drained();
            return true;
          });
        }
        queued += chunk.length;
        return false;
      },
      bufferedAmount: () => (closed ? 0 : queued),
      end: () => {
        if (closed) return;
        uwsRes.cork(() => uwsRes.end());
        close();
      },
    };
  }

  readBody(res: TransportResponse, maxBytes: number, done: (result: BodyReadResult) => void): void {
    const uwsRes = res as unknown as HttpResponse;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    uwsRes.onAborted(() => {
      if (settled) return;
      settled = true;
      done({ ok: false, reason: 'aborted' });
    });
    uwsRes.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > maxBytes) {
        settled = true;
        done({ ok: false, reason: 'too_large' });
        return;
      }
      // The ArrayBuffer is only valid during this callback: keep a copy.
      if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        settled = true;
        done({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
      }
    });
  }

  /**
   * By default a front (front.ts) owns host:port and uWS listens on a unix socket in a
   * private directory; requests uWS would not answer right go to a node:http server
   * (which never listens itself). With uwsDirect uWS listens on host:port alone.
   */
  async listen(host: string, port: number, handlersFor: (served: Transport) => TransportHandlers, options: ListenOptions): Promise<ListeningTransport> {
    const app = this.app(handlersFor(this));
    this.peerSource = options.uwsDirect ? 'socket' : (await readsProxyHeader(this.uws)) ? 'proxy' : 'unknown';
    if (options.uwsDirect) {
      // Without LIBUS_LISTEN_EXCLUSIVE_PORT uSockets sets SO_REUSEPORT, and a second
      // process on the same port would silently share it.
      const listenSocket = await new Promise<us_listen_socket | false>((resolve) =>
        (app as unknown as ListenWithOptions).listen(host, port, options.reusePort ? 0 : EXCLUSIVE_PORT, (socket) => resolve(socket)),
      );
      if (listenSocket === false) throw await portError(host, port);
      const uws = this.uws;
      let closed = false;
      return {
        port: uws.us_socket_local_port(listenSocket),
        publish: (topic, message, isBinary) => app.publish(topic, message, isBinary),
        close: async () => {
          if (closed) return;
          closed = true;
          uws.us_listen_socket_close(listenSocket);
          // Also drops open keep-alive connections and WebSockets so the process can exit
          // (present in the 20.30 build too, though missing from its typings).
          app.close();
        },
      };
    }
    const node = createNodeHttp(handlersFor(this.nodeTransport));
    const adoption = this.adoption();
    if (adoption.ok) {
      // uWS owns every connection whose first request it answers right; it never listens.
      const adopter: Adopter = { calls: adoption.calls, adopt: (fd) => (app as unknown as AdoptingApp).adoptSocket(fd) };
      // an adopted connection is the client's own socket: uWS reads the peer from it
      this.peerSource = 'socket';
      let front: ListeningFront;
      try {
        front = await listenFront({ host, port, uwsPath: '', nodeServer: node.server, reusePort: options.reusePort, proxyProtocol: false, adopter });
      } catch (error) {
        app.close();
        await node.close();
        throw error;
      }
      return this.frontListening(app, front, node, () => undefined);
    }
    const dir = mkdtempSync(join(tmpdir(), 'odds-uws-'));
    const uwsPath = join(dir, 'http.sock');
    const listenSocket = await new Promise<us_listen_socket | false>((resolve) => app.listen_unix((socket) => resolve(socket), uwsPath));
    if (!listenSocket) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`uWebSockets.js cannot listen on its private socket ${uwsPath}`);
    }
    let front: ListeningFront;
    try {
      front = await listenFront({ host, port, uwsPath, nodeServer: node.server, reusePort: options.reusePort, proxyProtocol: this.peerSource === 'proxy', adopter: null });
    } catch (error) {
      this.uws.us_listen_socket_close(listenSocket);
      app.close();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return this.frontListening(app, front, node, () => {
      this.uws.us_listen_socket_close(listenSocket);
      return () => rmSync(dir, { recursive: true, force: true });
    });
  }

  /**
   * Whether uWS can take connections from the front whole (socketAdoption.ts): this
   * build has app.adoptSocket and libc's recv and dup can be called. When not, uWS is
   * reached by relaying each request to it over a unix socket, which costs more than
   * node:http answering the request itself (docs/http.md), so `npm start` picks
   * node:http on a bare port unless TRANSPORT=uws asks for uWS.
   */
  adoption(): { ok: true; calls: SocketCalls } | { ok: false; reason: string } {
    if (this.adoptionCheck !== undefined) return this.adoptionCheck;
    const probe = this.uws.App();
    const hasAdopt = typeof (probe as unknown as Partial<AdoptingApp>).adoptSocket === 'function';
    probe.close();
    if (!hasAdopt) {
      this.adoptionCheck = { ok: false, reason: `${this.description} cannot adopt a socket (app.adoptSocket is missing)` };
      return this.adoptionCheck;
    }
    const calls = loadSocketCalls();
    this.adoptionCheck = calls.ok ? { ok: true, calls: calls.calls } : { ok: false, reason: calls.reason };
    return this.adoptionCheck;
  }

  /** The front and the servers behind it, closed in the order that lets uWS see its connections end. */
  private frontListening(app: TemplatedApp, front: ListeningFront, node: NodeHttp, stopUwsListening: () => (() => void) | void): ListeningTransport {
    let closed = false;
    return {
      port: front.port,
      // A WebSocket may have reached either server (the node:http one takes handshakes uWS would not parse).
      publish: (topic, message, isBinary) => {
        const viaUws = app.publish(topic, message, isBinary);
        const viaNode = node.publish(topic, message, isBinary);
        return viaUws || viaNode;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        // uWS first: it drops its connections (calling onAborted where a response is
        // pending) before the front closes the other ends under it.
        const cleanup = stopUwsListening();
        app.close();
        front.close();
        await node.close();
        if (cleanup) cleanup();
      },
    };
  }

  private app(handlers: TransportHandlers): TemplatedApp {
    const app = this.uws.App();
    for (const route of handlers.sockets) app.ws<UwsSocketData>(route.path, socketBehavior(route, this));
    app.any('/*', (res, req) => handlers.request(res, req));
    return app;
  }
}

/** Whether this build answers getProxiedRemoteAddressAsText from a PROXY v2 header; once per process. */
let proxyHeaderSupport: Promise<boolean> | undefined;

/**
 * Asks a throwaway uWS app on its own unix socket, once: a request behind a PROXY v2
 * header naming 192.0.2.1 must be answered with that address. Both builds this
 * repository loads read the header (uWebSockets.js is built with UWS_WITH_PROXY), but a
 * build without it would answer every relayed request 400, so it is checked, not assumed.
 */
function readsProxyHeader(uws: Uws): Promise<boolean> {
  proxyHeaderSupport ??= new Promise<boolean>((resolve) => {
    const dir = mkdtempSync(join(tmpdir(), 'odds-uws-probe-'));
    const path = join(dir, 'probe.sock');
    const app = uws.App();
    let settled = false;
    const settle = (answer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      app.close();
      rmSync(dir, { recursive: true, force: true });
      resolve(answer);
    };
    const timer = setTimeout(() => settle(false), 2000);
    app.any('/*', (res) => {
      const proxied = Buffer.from(res.getProxiedRemoteAddressAsText()).toString('latin1');
      res.end(`peer=${canonicalAddress(proxied)}`);
    });
    app.listen_unix((socket) => {
      if (!socket) return settle(false);
      const probe = net.connect({ path });
      let answer = '';
      probe.on('connect', () => {
        probe.write(Buffer.concat([proxyV2Header({ remoteAddress: '192.0.2.1', remotePort: 1, localAddress: '192.0.2.2', localPort: 2 }), Buffer.from('GET / HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n')]));
      });
      probe.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        if (answer.includes('peer=192.0.2.1')) {
          probe.destroy();
          settle(true);
        }
      });
      probe.on('error', () => settle(false));
      probe.on('close', () => settle(answer.includes('peer=192.0.2.1')));
    }, path);
  });
  return proxyHeaderSupport;
}

/** listen(host, port, options, cb): both builds take it; the typings list options only without a host. */
interface ListenWithOptions {
  listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void;
}

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (both builds export it). */
const EXCLUSIVE_PORT = 1;

/** Why uWS could not listen: uWS says only `false`, so node:net tries the same port for the reason. */
function portError(host: string, port: number): Promise<Error> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(listenError(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(new Error(`uWebSockets.js cannot listen on ${host}:${port}`))));
  });
}

interface UwsSocketData {
  data: unknown;
  connection: UwsConnection | null;
}

function socketBehavior(route: TransportSocketRoute, transport: UwsTransport) {
  const handlers = route.handlers;
  return {
    maxPayloadLength: route.maxPayloadBytes,
    maxBackpressure: route.maxBackpressureBytes,
    idleTimeout: route.idleTimeoutSeconds,
    upgrade(res: HttpResponse, req: HttpRequest, context: unknown) {
      // Everything from req is read before answering: it is invalid afterwards.
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const decision = route.upgrade(req, transport.peerAddress(res as unknown as TransportResponse));
      res.cork(() => {
        if (decision.accept) {
          res.upgrade<UwsSocketData>({ data: decision.data, connection: null }, key, protocol, extensions, context as never);
          return;
        }
        res.writeStatus(decision.reply.status);
        for (const [name, value] of decision.reply.headers) res.writeHeader(name, value);
        res.end(decision.reply.body, true);
      });
    },
    open(ws: WebSocket<UwsSocketData>) {
      const state = ws.getUserData();
      state.connection = new UwsConnection(ws, state.data);
      handlers.open?.(state.connection);
    },
    message(ws: WebSocket<UwsSocketData>, message: ArrayBuffer, isBinary: boolean) {
      // The ArrayBuffer is neutered when this returns: the handler gets a copy.
      handlers.message?.(ws.getUserData().connection!, Buffer.from(new Uint8Array(message)), isBinary);
    },
    drain(ws: WebSocket<UwsSocketData>) {
      handlers.drain?.(ws.getUserData().connection!);
    },
    close(ws: WebSocket<UwsSocketData>, code: number, message: ArrayBuffer) {
      const connection = ws.getUserData().connection!;
      connection.closed = true;
      handlers.close?.(connection, code, Buffer.from(new Uint8Array(message)));
    },
  };
}

const SEND_RESULT: readonly SendResult[] = ['backpressure', 'sent', 'dropped'];

/** Our view of a uWS WebSocket; the native one must not be touched after close. */
class UwsConnection implements SocketConnection {
  closed = false;

  constructor(
    private readonly ws: WebSocket<UwsSocketData>,
    readonly data: unknown,
  ) {}

  send(message: Buffer | string, isBinary: boolean): SendResult {
    if (this.closed) return 'dropped';
    return SEND_RESULT[this.ws.send(message, isBinary)] ?? 'dropped';
  }

  getBufferedAmount(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  cork(fn: () => void): void {
    if (this.closed) fn();
    else this.ws.cork(fn);
  }

  subscribe(topic: string): void {
    if (!this.closed) this.ws.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (!this.closed) this.ws.unsubscribe(topic);
  }

  end(code = 1000, reason = ''): void {
    if (!this.closed) this.ws.end(code, reason);
  }

  close(): void {
    if (!this.closed) this.ws.close();
  }
}

/**
 * Streams shared, immutable chunks to one client: it keeps only an index and an offset
 * into them, uWS copies at most what the socket accepts, and a client that disconnects
 * mid-body just drops its position.
 */
class UwsBodyStream {
  private index = 0;
  /** Write offset at which the current chunk began. */
  private chunkBase = 0;
  private finished = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly chunks: readonly Buffer[],
    private readonly total: number,
    private readonly events: BodyStreamEvents,
  ) {}

  abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.events.done(false);
  }

  /**
   * Hands over chunks until done, the socket pushes back, or this turn's budget
   * (BODY_BYTES_PER_TURN) is spent: then it goes on in the next turn, corked, since
   * uWS writes outside its own callbacks only inside cork.
   */
  pump(): void {
    if (this.total === 0) {
      this.res.end();
      this.finish();
      return;
    }
    let handed = 0;
    while (this.index < this.chunks.length && !this.finished) {
      if (handed >= BODY_BYTES_PER_TURN) {
        setImmediate(this.nextTurn);
        return;
      }
      const chunk = this.chunks[this.index]!;
      this.chunkBase = this.res.getWriteOffset();
      if (!this.attempt(chunk)) {
        this.events.waited();
        this.res.onWritable((offset) => this.resume(offset));
        return;
      }
      handed += chunk.length;
    }
  }

  private readonly nextTurn = (): void => {
    if (!this.finished) this.res.cork(() => this.pump());
  };

  /** true when the chunk was fully handed over (or the response finished). */
  private attempt(bytes: Buffer): boolean {
    const [ok, done] = this.res.tryEnd(bytes, this.total);
    if (done) {
      this.finish();
      return true;
    }
    if (ok) this.index++;
    return ok;
  }

  private resume(offset: number): boolean {
    if (this.finished) return true;
    const chunk = this.chunks[this.index]!;
    if (!this.attempt(chunk.subarray(offset - this.chunkBase))) return false;
    if (!this.finished) this.pump();
    return true;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.events.done(true);
  }
}

/** uWS 20.4x and later: takes an accepted socket's descriptor as if its own listener had accepted it. */
interface AdoptingApp {
  adoptSocket(fd: number): void;
}
