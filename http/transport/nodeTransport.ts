// The transport over node:http, for where no native uWebSockets.js binary loads (and
// for TRANSPORT=node). WebSockets come from the `ws` package. It also answers what uWS
// drops without a word: 400 for a request its parser rejects, 414 for an oversized
// URL, 431 for oversized or too many headers, 405 for a method token the parser does
// not know.
import http, { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { BODY_BYTES_PER_TURN } from './transport.ts';
import type {
  BodyReadResult,
  BodyStreamEvents,
  HeaderBlock,
  ListeningTransport,
  PlainReply,
  ProtocolFault,
  ResponseStream,
  ResponseStreamEvents,
  SendResult,
  SocketConnection,
  SocketHandlers,
  Transport,
  TransportHandlers,
  TransportRequest,
  TransportResponse,
  TransportSocketRoute,
  ListenOptions,
} from './transport.ts';
import { checkReusePort, listenError } from './front.ts';
import { canonicalAddress } from './peerAddress.ts';

/** Longest request target (path and query) answered; longer ones get 414. */
export const MAX_URL_BYTES = 8 * 1024;
/** Most request headers answered; more get 431. */
export const MAX_HEADER_COUNT = 100;
/** Request line plus headers; more get 431 (or 414 when the request line alone is that long). */
export const MAX_HEADER_BYTES = 16 * 1024;

export class NodeTransport implements Transport {
  readonly kind = 'node' as const;

  constructor(readonly description: string) {}

  headerBlock(headers: readonly (readonly [string, string])[]): HeaderBlock {
    return headers;
  }

  writeHeaderBlock(res: TransportResponse, block: HeaderBlock, name: string, value: string): void {
    for (let i = 0; i < block.length; i++) res.writeHeader(block[i]![0], block[i]![1]);
    res.writeHeader(name, value);
  }

  streamBody(res: TransportResponse, chunks: readonly Buffer[], total: number, events: BodyStreamEvents): void {
    const exchange = res as NodeExchange;
    const out = exchange.startBody(total);
    let index = 0;
    let finished = false;
    const finish = (completed: boolean) => {
      if (finished) return;
      finished = true;
      events.done(completed);
    };
    out.on('close', () => finish(false));
    // write() keeps a reference to the shared chunk (no copy) and says false once the
    // socket's buffer is full: then wait for 'drain', so one client holds at most the
    // chunk in flight. A turn hands over at most BODY_BYTES_PER_TURN, then yields.
    const pump = (): void => {
      let handed = 0;
      while (!finished) {
        if (index >= chunks.length - 1) {
          out.end(chunks[index]);
          finish(true);
          return;
        }
        if (handed >= BODY_BYTES_PER_TURN) {
          setImmediate(pump);
          return;
        }
        const chunk = chunks[index++]!;
        handed += chunk.length;
        if (!out.write(chunk)) {
          events.waited();
          out.once('drain', pump);
          return;
        }
      }
    };
    pump();
  }

  /** The connection's peer: also right for connections the uWS front handed over (the socket is the client's own). */
  peerAddress(res: TransportResponse): string {
    return canonicalAddress((res as NodeExchange).req.socket.remoteAddress);
  }

  openStream(res: TransportResponse, events: ResponseStreamEvents): ResponseStream {
    const out = (res as NodeExchange).startStream();
    let closed = false;
    out.on('drain', () => {
      if (!closed) events.drained();
    });
    out.on('close', () => {
      if (closed) return;
      closed = true;
      events.closed();
    });
    return {
      write: (chunk) => !closed && !out.destroyed && out.write(chunk),
      bufferedAmount: () => (closed ? 0 : out.writableLength),
      end: () => {
        if (!closed) out.end();
      },
    };
  }

  readBody(res: TransportResponse, maxBytes: number, done: (result: BodyReadResult) => void): void {
    const exchange = res as NodeExchange;
    const req = exchange.req;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyReadResult) => {
      if (settled) return;
      settled = true;
      req.removeListener('data', onData);
      done(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // The rest is not read: the answer closes the connection.
        req.pause();
        settle({ ok: false, reason: 'too_large' });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => settle({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) }));
    exchange.res.on('close', () => settle({ ok: false, reason: 'aborted' }));
  }

  listen(host: string, port: number, handlersFor: (served: Transport) => TransportHandlers, options: ListenOptions): Promise<ListeningTransport> {
    checkReusePort(options.reusePort);
    const node = createNodeHttp(handlersFor(this));
    const server = node.server;
    return new Promise((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
      const listenOptions: import('node:net').ListenOptions & { reusePort?: boolean } = { host, port, exclusive: true };
      if (options.reusePort) listenOptions.reusePort = true;
      server.listen(listenOptions, () => {
        server.removeAllListeners('error');
        const address = server.address();
        let closed = false;
        resolve({
          port: typeof address === 'object' && address !== null ? address.port : port,
          publish: (topic, message, isBinary) => node.publish(topic, message, isBinary),
          close: () => {
            if (closed) return Promise.resolve();
            closed = true;
            return node.close();
          },
        });
      });
    });
  }
}

/** A node:http server answering through the facade, not yet listening (NodeTransport listens it; the uWS front hands it connections). */
export interface NodeHttp {
  server: http.Server;
  publish(topic: string, message: Buffer | string, isBinary: boolean): boolean;
  /** Stops the server and drops its connections and WebSockets. */
  close(): Promise<void>;
}

export function createNodeHttp(handlers: TransportHandlers): NodeHttp {
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES });
  server.maxHeadersCount = MAX_HEADER_COUNT + 1;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const exchange = new NodeExchange(req, res);
    const oversized = checkLimits(req);
    if (oversized !== null) {
      exchange.writePlain(handlers.protocolFault(oversized.fault, oversized.detail));
      return;
    }
    handlers.request(exchange, exchange);
  });
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      socket.destroy();
      return;
    }
    const { fault, detail } = faultOf(error);
    socket.end(serialize(handlers.protocolFault(fault, detail)));
  });
  const sockets = new NodeSockets(handlers.sockets);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (sockets.handles(req)) {
      sockets.upgrade(req, socket, head);
      return;
    }
    // Not a WebSocket endpoint: answered as the ordinary request it also is (as uWS
    // does), on a connection that closes afterwards.
    const res = new http.ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    res.on('finish', () => socket.end());
    server.emit('request', req, res);
  });
  return {
    server,
    publish: (topic, message, isBinary) => sockets.publish(topic, message, isBinary),
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
        sockets.closeAll();
      }),
  };
}

function checkLimits(req: IncomingMessage): { fault: ProtocolFault; detail: string } | null {
  // llhttp parses any HTTP/d.d; only 1.x is served (RFC 9110 15.6.6).
  if (req.httpVersionMajor !== 1) return { fault: 'http_version_not_supported', detail: `HTTP/${req.httpVersion} is not served; use HTTP/1.1 or HTTP/1.0` };
  if ((req.url ?? '').length > MAX_URL_BYTES) return { fault: 'uri_too_long', detail: `the request target is longer than ${MAX_URL_BYTES} bytes` };
  if (req.rawHeaders.length > MAX_HEADER_COUNT * 2) return { fault: 'header_fields_too_large', detail: `more than ${MAX_HEADER_COUNT} request headers` };
  return null;
}

/**
 * What the parser rejected. Its header limit covers the request line too, so an
 * overflow whose first line never ended (or ended past the URL limit) is an oversized
 * URL; otherwise the headers are too large.
 */
function faultOf(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): { fault: ProtocolFault; detail: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const packet = error.rawPacket;
    const lineEnd = packet === undefined ? -1 : packet.indexOf('\r\n');
    if (packet !== undefined && (lineEnd === -1 || lineEnd > MAX_URL_BYTES)) {
      return { fault: 'uri_too_long', detail: `the request target is longer than ${MAX_URL_BYTES} bytes` };
    }
    return { fault: 'header_fields_too_large', detail: `request headers larger than ${MAX_HEADER_BYTES} bytes` };
  }
  if (error.code === 'HPE_INVALID_METHOD') return { fault: 'method_not_allowed', detail: 'unknown request method' };
  return { fault: 'bad_request', detail: `malformed HTTP request (${error.code ?? 'parse error'})` };
}

/** A complete response as bytes, for a socket no ServerResponse owns; the connection closes after it. */
function serialize(reply: PlainReply): Buffer {
  let head = `HTTP/1.1 ${reply.status}\r\n`;
  for (const [name, value] of reply.headers) head += `${name}: ${value}\r\n`;
  head += `Content-Length: ${reply.body.length}\r\nConnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), reply.body]);
}

/**
 * The path and query of a request target. An absolute-form target
 * (`GET http://host:port/api/v1/status`, what a client talking to a proxy sends) names
 * the same resource as its path: RFC 9112 3.2.2 says a server must accept it.
 */
export function originForm(target: string): string {
  if (target.charCodeAt(0) === 47) return target;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(target);
  if (scheme === null) return target;
  const pathStart = target.slice(scheme[0].length).search(/[/?]/);
  if (pathStart === -1) return '/';
  const rest = target.slice(scheme[0].length + pathStart);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/** The request view: what transport.ts asks for, read from an IncomingMessage. */
class NodeRequestView implements TransportRequest {
  private readonly method: string;
  private readonly path: string;
  private readonly query: string;

  constructor(readonly req: IncomingMessage) {
    const url = originForm(req.url ?? '/');
    const mark = url.indexOf('?');
    this.path = mark === -1 ? url : url.slice(0, mark);
    this.query = mark === -1 ? '' : url.slice(mark + 1);
    this.method = (req.method ?? 'GET').toLowerCase();
  }

  getMethod(): string {
    return this.method;
  }

  getUrl(): string {
    return this.path;
  }

  getQuery(): string {
    return this.query;
  }

  getHeader(lowerCaseName: string): string {
    const value = this.req.headers[lowerCaseName];
    return typeof value === 'string' ? value : '';
  }
}

/**
 * One request and its response. Status and headers are collected and go out in one
 * writeHead call (a flat name/value list: no header map, names kept as given).
 */
class NodeExchange extends NodeRequestView implements TransportResponse {
  private statusCode = 200;
  private statusMessage = 'OK';
  private readonly headers: string[] = [];
  private ended = false;

  constructor(
    req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    super(req);
  }

  cork(fn: () => void): void {
    fn();
  }

  writeStatus(status: string): this {
    const space = status.indexOf(' ');
    this.statusCode = Number(space === -1 ? status : status.slice(0, space));
    this.statusMessage = space === -1 ? (STATUS_CODES[this.statusCode] ?? '') : status.slice(space + 1);
    return this;
  }

  writeHeader(name: string, value: string): this {
    this.headers.push(name, value);
    return this;
  }

  end(body?: Buffer, closeConnection = false): this {
    const length = body === undefined ? 0 : body.length;
    this.headers.push('Content-Length', String(length));
    if (closeConnection) this.headers.push('Connection', 'close');
    this.ended = true;
    this.res.writeHead(this.statusCode, this.statusMessage, this.headers);
    this.res.end(body);
    return this;
  }

  endWithoutBody(): this {
    this.ended = true;
    this.res.writeHead(this.statusCode, this.statusMessage, this.headers);
    this.res.end();
    return this;
  }

  onAborted(handler: () => void): this {
    this.res.once('close', () => {
      if (!this.ended) handler();
    });
    return this;
  }

  /** For a streamed body: the head with its length; the caller writes and ends. */
  startBody(total: number): ServerResponse {
    this.headers.push('Content-Length', String(total));
    this.ended = true;
    this.res.writeHead(this.statusCode, this.statusMessage, this.headers);
    return this.res;
  }

  /** For an open-ended body: the head without a length (chunked); the caller writes and ends. */
  startStream(): ServerResponse {
    this.ended = true;
    this.res.writeHead(this.statusCode, this.statusMessage, this.headers);
    this.res.flushHeaders();
    return this.res;
  }

  writePlain(reply: PlainReply): void {
    this.writeStatus(reply.status);
    for (const [name, value] of reply.headers) this.writeHeader(name, value);
    this.end(reply.body, true);
  }
}

/** WebSocket endpoints over `ws`, and the topics published to them. */
class NodeSockets {
  private readonly routes = new Map<string, { route: TransportSocketRoute; server: WebSocketServer }>();
  private readonly topics = new Map<string, Set<WsConnection>>();
  private readonly open = new Set<WsConnection>();

  constructor(routes: readonly TransportSocketRoute[]) {
    for (const route of routes) {
      const server = new WebSocketServer({ noServer: true, maxPayload: route.maxPayloadBytes, perMessageDeflate: false, clientTracking: false });
      this.routes.set(route.path, { route, server });
    }
  }

  handles(req: IncomingMessage): boolean {
    return this.routes.has(pathOf(originForm(req.url ?? '/')));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { route, server } = this.routes.get(pathOf(originForm(req.url ?? '/')))!;
    const decision = route.upgrade(new NodeRequestView(req), canonicalAddress(req.socket.remoteAddress));
    if (!decision.accept) {
      socket.end(serialize(decision.reply));
      return;
    }
    server.handleUpgrade(req, socket, head, (client) => {
      const connection = new WsConnection(client, decision.data, route, this.topics);
      this.open.add(connection);
      wire(connection, client, socket, route.handlers, () => this.open.delete(connection));
    });
  }

  publish(topic: string, message: Buffer | string, isBinary: boolean): boolean {
    const subscribers = this.topics.get(topic);
    if (subscribers === undefined || subscribers.size === 0) return false;
    for (const connection of subscribers) connection.send(message, isBinary);
    return true;
  }

  closeAll(): void {
    for (const connection of this.open) connection.close();
  }
}

function pathOf(url: string): string {
  const mark = url.indexOf('?');
  return mark === -1 ? url : url.slice(0, mark);
}

function wire(connection: WsConnection, client: WebSocket, socket: Duplex, handlers: SocketHandlers, forget: () => void): void {
  const idle = connection.route.idleTimeoutSeconds;
  // Like uWS's idleTimeout: no traffic either way for that long closes the connection.
  if (idle > 0 && 'setTimeout' in socket) (socket as import('node:net').Socket).setTimeout(idle * 1000, () => client.terminate());
  client.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    handlers.message?.(connection, bytes, isBinary);
  });
  client.on('close', (code: number, reason: Buffer) => {
    connection.closed = true;
    connection.leaveAll();
    forget();
    handlers.close?.(connection, code, reason);
  });
  client.on('error', () => client.terminate());
  handlers.open?.(connection);
}

class WsConnection implements SocketConnection {
  closed = false;
  private readonly subscribed = new Set<string>();
  /** A send reported backpressure: call drain once everything queued is written. */
  private awaitingDrain = false;
  private readonly written = () => {
    if (!this.awaitingDrain || this.closed || this.client.bufferedAmount > 0) return;
    this.awaitingDrain = false;
    this.route.handlers.drain?.(this);
  };

  constructor(
    private readonly client: WebSocket,
    readonly data: unknown,
    readonly route: TransportSocketRoute,
    private readonly topics: Map<string, Set<WsConnection>>,
  ) {}

  send(message: Buffer | string, isBinary: boolean): SendResult {
    if (this.closed || this.client.readyState !== this.client.OPEN) return 'dropped';
    if (this.client.bufferedAmount > this.route.maxBackpressureBytes) return 'dropped';
    this.client.send(message, { binary: isBinary }, this.written);
    // Bytes the socket could not write at once stay queued: that is backpressure, and
    // drain follows when the queue is written (the send callbacks run in order).
    if (this.client.bufferedAmount === 0) return 'sent';
    this.awaitingDrain = true;
    return 'backpressure';
  }

  getBufferedAmount(): number {
    return this.closed ? 0 : this.client.bufferedAmount;
  }

  /**
   * Runs fn: corking the socket would hold the frames in its writable buffer, which
   * `ws` counts as bufferedAmount, so every send in it would read as backpressure.
   */
  cork(fn: () => void): void {
    fn();
  }

  subscribe(topic: string): void {
    if (this.closed || this.subscribed.has(topic)) return;
    this.subscribed.add(topic);
    let set = this.topics.get(topic);
    if (set === undefined) this.topics.set(topic, (set = new Set()));
    set.add(this);
  }

  unsubscribe(topic: string): void {
    if (!this.subscribed.delete(topic)) return;
    const set = this.topics.get(topic);
    set?.delete(this);
    if (set !== undefined && set.size === 0) this.topics.delete(topic);
  }

  leaveAll(): void {
    for (const topic of [...this.subscribed]) this.unsubscribe(topic);
  }

  end(code = 1000, reason = ''): void {
    if (!this.closed) this.client.close(code, reason);
  }

  close(): void {
    if (!this.closed) this.client.terminate();
  }
}
