// What the HTTP facade (http/server.ts) needs from a network transport, and nothing
// more. Two implementations: uWebSockets.js (native binary, the fast one) and node:http
// (with the `ws` package for WebSockets), picked at start-up (selectTransport.ts). The
// facade does routing, caching, ETags, negotiation, auth and error bodies; no route
// knows which transport serves it.
//
// The request and response shapes follow uWebSockets.js on purpose: its objects satisfy
// them as they are, so the native path costs no wrapper per request; node:http adapts
// to them (nodeTransport.ts).

/** Which implementation; TRANSPORT=uws|node forces one. */
export type TransportKind = 'uws' | 'node';
export type TransportChoice = TransportKind | 'auto';

/**
 * One request as the handler sees it. Valid only during the synchronous handler call
 * (uWS reuses it afterwards): read everything needed before returning.
 */
export interface TransportRequest {
  /** Lower case: 'get', 'head', 'post', 'propfind'... */
  getMethod(): string;
  /** The path without the query string, not decoded. */
  getUrl(): string;
  /** The raw query string without '?'; empty or undefined when there is none. */
  getQuery(): string | undefined;
  /** The header's value, '' when absent. name: lower case. */
  getHeader(lowerCaseName: string): string;
}

/**
 * The response. Status first, then headers, then exactly one of end/endWithoutBody (or
 * a streamed body through Transport.streamBody).
 */
export interface TransportResponse {
  /** Batches the writes made in `fn` into one send (uWS cork); node:http just runs fn. */
  cork(fn: () => void): void;
  /** e.g. '404 Not Found'; defaults to '200 OK'. */
  writeStatus(status: string): TransportResponse;
  writeHeader(name: string, value: string): TransportResponse;
  /** Writes the body with its Content-Length; closeConnection adds Connection: close. */
  end(body?: Buffer, closeConnection?: boolean): TransportResponse;
  /** No body (204, 304, HEAD with an explicit Content-Length header). */
  endWithoutBody(): TransportResponse;
  /** Called once if the client goes away before the response ended. Required before answering asynchronously. */
  onAborted(handler: () => void): TransportResponse;
}

/** A fixed set of headers prepared once by the transport (headerBlock) and written as a unit. */
export type HeaderBlock = readonly (readonly [string, string])[];

/**
 * Most bytes of one streamed body handed to its socket in one event-loop turn. On a
 * fast link the socket never pushes back (loopback takes a 41 MB snapshot at ~750 MB/s),
 * so a body written to the end in one go held the loop ~55 ms, and every other read,
 * the stream's sends and ingest waited behind it; past this budget the body goes on in
 * the next turn (1 MiB is ~1.4 ms of writing at that speed, and a few hundred turns of
 * a 41 MB body cost nothing measurable).
 */
export const BODY_BYTES_PER_TURN = 1024 * 1024;

/** How a streamed body ended; largeBody.ts keeps the counters. */
export interface BodyStreamEvents {
  /** The socket pushed back: the stream waits for it instead of buffering a copy. */
  waited(): void;
  /** true: the last byte was handed to the socket; false: the client left first. */
  done(completed: boolean): void;
}

/**
 * An open-ended response body (Server-Sent Events): chunks written over time, no
 * Content-Length. write() hands the chunk to the socket, or queues it when the socket
 * pushes back (then false, and `drained` follows once the queue is written).
 */
export interface ResponseStream {
  /** false: the chunk was queued behind unsent bytes (or the client is gone). */
  write(chunk: Buffer): boolean;
  /** Bytes queued and not yet written to the socket. */
  bufferedAmount(): number;
  /** Ends the response. */
  end(): void;
}

export interface ResponseStreamEvents {
  /** The queued bytes went out: writing may resume. */
  drained(): void;
  /** The client went away or the response ended; called once. */
  closed(): void;
}

/** Outcome of reading a request body under a byte cap. */
export type BodyReadResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' };

// ---- WebSockets ----------------------------------------------------------------

/** Result of a send: handed over, queued behind earlier data (wait for drain), or dropped (over maxBackpressure). */
export type SendResult = 'sent' | 'backpressure' | 'dropped';

/** One open WebSocket, the same object from open to close. */
export interface SocketConnection<U = unknown> {
  /** What the route's upgrade returned for this connection. */
  readonly data: U;
  /** Sends one message (binary or text). After close it is dropped. */
  send(message: Buffer | string, isBinary: boolean): SendResult;
  /** Bytes queued on this connection and not yet written to the socket. */
  getBufferedAmount(): number;
  /**
   * Runs `fn` with this connection's sends gathered into one socket write when it
   * returns (uWS cork). Where the transport cannot (node:http, or inside another
   * connection's cork) the sends are written as they come.
   */
  cork(fn: () => void): void;
  /** Receives what the server publishes to this topic until unsubscribed or closed. */
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  /** Graceful close with a close frame (code default 1000). */
  end(code?: number, reason?: string): void;
  /** Immediate close without a close frame. */
  close(): void;
}

/** The per-route callbacks the transport calls for an accepted WebSocket. */
export interface SocketHandlers<U = unknown> {
  open?(ws: SocketConnection<U>): void;
  /** data is a copy the handler may keep. */
  message?(ws: SocketConnection<U>, data: Buffer, isBinary: boolean): void;
  /** The queued bytes went out: sending may resume. */
  drain?(ws: SocketConnection<U>): void;
  close?(ws: SocketConnection<U>, code: number, reason: Buffer): void;
}

/** A WebSocket endpoint as the transport sees it (the facade builds it from a socket route). */
export interface TransportSocketRoute {
  /** Exact path, e.g. '/api/v1/ingest/ws'. */
  path: string;
  /** Largest message accepted; bigger ones close the connection (1009). */
  maxPayloadBytes: number;
  /** Queued bytes above which send() drops instead of queueing. */
  maxBackpressureBytes: number;
  /** Seconds without traffic before the connection is closed (0: never). */
  idleTimeoutSeconds: number;
  /** Decides the upgrade from the handshake request and the peer's address (canonical text, peerAddress.ts), synchronously. */
  upgrade(req: TransportRequest, remoteAddress: string): UpgradeDecision;
  handlers: SocketHandlers;
}

/** A refused handshake is answered as an ordinary HTTP response. */
export type UpgradeDecision = { accept: true; data: unknown } | { accept: false; reply: PlainReply };

/** A complete small response the transport writes itself (refused upgrades, protocol errors). */
export interface PlainReply {
  status: string;
  headers: readonly (readonly [string, string])[];
  body: Buffer;
}

/**
 * Requests the facade never sees because they are not valid HTTP to the transport's
 * parser; the facade renders the answer (the JSON error body) and the transport sends
 * it, then closes the connection.
 */
export type ProtocolFault = 'bad_request' | 'uri_too_long' | 'header_fields_too_large' | 'method_not_allowed' | 'http_version_not_supported';

export interface TransportHandlers {
  request(res: TransportResponse, req: TransportRequest): void;
  protocolFault(fault: ProtocolFault, detail: string): PlainReply;
  sockets: readonly TransportSocketRoute[];
}

export interface ListeningTransport {
  port: number;
  /** Sends to every connection subscribed to topic; false when nobody is subscribed. */
  publish(topic: string, message: Buffer | string, isBinary: boolean): boolean;
  /** Stops listening and drops open connections (HTTP keep-alive and WebSockets). */
  close(): Promise<void>;
}

export interface Transport {
  readonly kind: TransportKind;
  /** For the ready line: 'uWebSockets.js 20.57 native' or 'node:http (no uWebSockets.js binary for Node 24 / glibc 2.36)'. */
  readonly description: string;
  /** Prepares constant headers to be written with one writeHeader call per entry. */
  headerBlock(headers: readonly (readonly [string, string])[]): HeaderBlock;
  /** Writes a prepared block and one more header (the per-response request id) in as few calls as the transport allows. */
  writeHeaderBlock(res: TransportResponse, block: HeaderBlock, name: string, value: string): void;
  /**
   * The client's address for the request being answered (within the handler):
   * canonical text (peerAddress.ts), '' when the transport cannot know it. The TCP peer,
   * or behind the uWS front the client the front relays; never a header the client sent.
   */
  peerAddress(res: TransportResponse): string;
  /**
   * After status and headers were written: streams `chunks` (total bytes) with
   * backpressure, never copying more than the socket accepts.
   */
  streamBody(res: TransportResponse, chunks: readonly Buffer[], total: number, events: BodyStreamEvents): void;
  /**
   * After status and headers were written (within the request handler): opens an
   * open-ended body (no Content-Length) written chunk by chunk through the returned
   * stream, for as long as both sides keep it.
   */
  openStream(res: TransportResponse, events: ResponseStreamEvents): ResponseStream;
  /**
   * Reads the request body into one Buffer, at most maxBytes (over it: too_large at
   * once, the rest is not read). Call from the request handler, synchronously.
   */
  readBody(res: TransportResponse, maxBytes: number, done: (result: BodyReadResult) => void): void;
  /**
   * Listens on host:port. handlersFor gives the facade's handlers for the transport
   * that serves a request: the uWS transport serves some connections through node:http
   * (front.ts), and those requests must be answered through node:http's methods.
   */
  listen(host: string, port: number, handlersFor: (served: Transport) => TransportHandlers, options: ListenOptions): Promise<ListeningTransport>;
}

export interface ListenOptions {
  /**
   * SO_REUSEPORT: another process may listen on the same port and the kernel spreads
   * connections between them. Off unless a setting asks (REUSE_PORT=1): by default a
   * second process on a port in use fails to start.
   */
  reusePort: boolean;
  /**
   * uWS only: uWS listens on the port itself, with no front. Fastest, but uWS then
   * holds, drops or misanswers the requests its parser does not serve (UWS_DIRECT=1;
   * for a service reached only through a proxy that speaks plain HTTP/1.1 to it).
   */
  uwsDirect: boolean;
}
