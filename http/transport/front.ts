// The front of the uWebSockets.js transport: a node:net server owns the public port and
// serves each request through uWS when uWS is known to answer its shape right
// (requestHead.ts), through node:http otherwise. Two ways:
//   - adopting (uWS builds with app.adoptSocket, on Linux): the first request of a
//     connection is peeked at without being read (socketAdoption.ts), and the whole
//     connection goes to uWS or to node:http; nothing is relayed (routeFirstRequest);
//   - relaying (everywhere else): uWS listens on a private unix socket; the front
//     writes a request to it only once the response to the previous one has ended
//     (responseFraming.ts), so pipelined requests are answered in order with complete
//     bodies, which uWS alone does not do (FrontConnection). This costs more than
//     node:http answering itself, so the service picks it only when asked
//     (selectTransport.ts).
//
// Why a front and not uWS on the port: uWS's parser holds or drops many legal
// requests (HTTP/1.0, absolute-form targets, header names with '_' or '~', extension
// methods, control bytes, large heads: docs/http.md), gives JavaScript no
// hook to answer them, and offers no way to hand it a connection together with bytes
// already read (20.30 cannot adopt a socket at all; 20.57's adoptSocket takes a
// descriptor whose bytes are all still unread), so whatever decides must either peek
// (adopting) or read the bytes and stay in the path (relaying).
//
// A connection whose request goes to node:http is handed to the node:http server for
// good (it answers everything, pipelining included); a uWS connection that later
// sends a request uWS would not answer is handed over the same way, between
// responses. WebSocket handshakes go to node:http (requestHead.ts says why); a 101
// from uWS would still turn the connection into a byte tunnel.
import net from 'node:net';
import type http from 'node:http';
import { scanRequestHead } from './requestHead.ts';
import { proxyV2Header } from './peerAddress.ts';
import { ResponseFramer } from './responseFraming.ts';
import type { SocketCalls } from './socketAdoption.ts';

/** A connection that has not sent a whole request head for this long goes to node:http, whose request timeouts then apply. */
const HEAD_WAIT_MS = 10_000;
/** Pipelined bytes held while a response is being written before the client is read no further. */
const MAX_HELD_BYTES = 256 * 1024;
const EMPTY = Buffer.alloc(0);
/** How long a released uWS connection may take to answer and close before it is destroyed. */
const RELEASE_MS = 30_000;
const discard = (): void => undefined;
/** Bytes of answers queued to a slow client before uWS is read no further. */
const RELAY_HIGH_WATER = 1024 * 1024;

export interface FrontOptions {
  host: string;
  port: number;
  /** The unix socket uWS listens on. */
  uwsPath: string;
  /** Takes the connections uWS would not answer right (never listens itself). */
  nodeServer: http.Server;
  /** SO_REUSEPORT: several processes share the port (only when a setting asks; Node >= 22.12). */
  reusePort: boolean;
  /**
   * Opens each uWS connection with a PROXY v2 header naming the client's address
   * (peerAddress.ts), so that uWS knows whom it answers; false where the uWS build does
   * not read one (it would take the header for a malformed request).
   */
  proxyProtocol: boolean;
  /**
   * Where uWS can take a connection itself (socketAdoption.ts): a connection whose first
   * request uWS answers right goes to uWS whole, everything else to node:http, and
   * nothing is relayed. Null: every uWS request is relayed over uwsPath.
   */
  adopter: Adopter | null;
}

export interface Adopter {
  calls: SocketCalls;
  /** Gives uWS a descriptor of an accepted connection (uWS closes it). */
  adopt(fd: number): void;
}

export interface ListeningFront {
  port: number;
  close(): void;
}

/** node:net's `reusePort` listen option: Node 22.12 and later (older ones ignore it silently). */
export function netReusePortSupported(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

/** Refuses REUSE_PORT=1 where node:net would ignore it (a silent single-owner port is not what was asked). */
export function checkReusePort(reusePort: boolean): void {
  if (reusePort && !netReusePortSupported()) {
    throw new Error(`REUSE_PORT=1 needs Node 22.12 or later for this transport (this is Node ${process.versions.node}); with uWebSockets.js, UWS_DIRECT=1 shares the port on any Node`);
  }
}

/** Listens on the public port; fails with a message naming the port when another process holds it. */
export function listenFront(options: FrontOptions): Promise<ListeningFront> {
  checkReusePort(options.reusePort);
  const open = new Set<{ destroy(): void }>();
  const adopter = options.adopter;
  // Adopting, a connection is not read until its first bytes were peeked at.
  const server = net.createServer({ noDelay: true, pauseOnConnect: adopter !== null }, (socket) => {
    if (adopter !== null) {
      open.add(socket);
      routeFirstRequest(socket, adopter, options.nodeServer, 0, () => open.delete(socket));
      return;
    }
    const connection = new FrontConnection(socket, options, () => open.delete(connection));
    open.add(connection);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, options.host, options.port)));
    const listenOptions: net.ListenOptions & { reusePort?: boolean } = { host: options.host, port: options.port, exclusive: true };
    if (options.reusePort) listenOptions.reusePort = true;
    server.listen(listenOptions, () => {
      server.removeAllListeners('error');
      server.on('error', () => undefined);
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : options.port,
        close: () => {
          server.close();
          for (const connection of open) connection.destroy();
          open.clear();
        },
      });
    });
  });
}

/** The start-up error for a port that cannot be had, with what to do about it. */
export function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === 'EADDRINUSE') {
    return new Error(
      `port ${port} on ${host} is already in use by another process (EADDRINUSE): stop that process or choose another PORT ` +
        '(one process per port; REUSE_PORT=1 shares a port between processes on purpose)',
    );
  }
  if (error.code === 'EACCES') return new Error(`no permission to listen on ${host}:${port} (EACCES): choose a PORT above 1023 or grant the capability`);
  if (error.code === 'EADDRNOTAVAIL') return new Error(`cannot listen on ${host}:${port}: no such local address (EADDRNOTAVAIL); check HOST`);
  return new Error(`cannot listen on ${host}:${port}: ${error.message}`);
}

/** Bytes looked at before choosing: more than the largest head uWS takes, so a request pipelined behind it shows. */
const PEEK_BYTES = 16 * 1024;
const peekBuffer = Buffer.allocUnsafe(PEEK_BYTES);
/**
 * Waits between peeks at a connection that has not sent a whole request head yet (ms;
 * 0 is the next turn of the event loop). A client writes its request right after
 * connecting, so it is nearly always there at the first or second look, but a client
 * on a loaded machine can be descheduled between connect and write; one that says
 * nothing for ~250 ms goes to node:http, which answers every request correctly, at
 * node:http's speed, and applies its own request timeouts.
 */
const PEEK_WAITS_MS = [0, 0, 1, 2, 4, 8, 16, 32, 64, 128];

/**
 * Chooses, from the first request's bytes still in the kernel, who owns the connection:
 * uWS when that request is one it answers right (requestHead.ts) and nothing is
 * pipelined behind it, node:http otherwise. Later requests on an adopted connection go
 * to uWS as they come (docs/http.md says what that leaves).
 */
function routeFirstRequest(socket: net.Socket, adopter: Adopter, nodeServer: http.Server, attempt: number, forget: () => void): void {
  if (socket.destroyed) return forget();
  const fd = (socket as unknown as { _handle?: { fd?: number } | null })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return giveToNode(socket, nodeServer, forget);
  const got = adopter.calls.peek(fd, peekBuffer);
  if (got === 'error' || got === 0) {
    // Reset, or closed before sending anything: there is no request to answer.
    socket.destroy();
    return forget();
  }
  const scan = got === 'again' ? null : scanRequestHead(peekBuffer.subarray(0, got), 0);
  if (scan === null || scan.kind === 'incomplete') {
    if (attempt >= PEEK_WAITS_MS.length) return giveToNode(socket, nodeServer, forget);
    const retry = (): void => routeFirstRequest(socket, adopter, nodeServer, attempt + 1, forget);
    const wait = PEEK_WAITS_MS[attempt]!;
    if (wait === 0) setImmediate(retry);
    else setTimeout(retry, wait);
    return;
  }
  // Bytes past the first request's body are a pipelined request: uWS cuts a long answer
  // with one waiting behind it, so such a connection goes to node:http. (A full buffer
  // short of the body's end is that body, larger than the buffer.)
  const alone = scan.kind === 'uws' && (got as number) <= scan.headEnd + scan.bodyLength;
  if (scan.kind === 'uws' && !scan.upgrade && alone) {
    const copy = adopter.calls.dup(fd);
    if (copy >= 0) {
      adopter.adopt(copy);
      // Closes Node's descriptor only: uWS's copy keeps the connection open.
      socket.destroy();
      return forget();
    }
  }
  giveToNode(socket, nodeServer, forget);
}

/** node:http takes a connection nothing has read yet. */
function giveToNode(socket: net.Socket, nodeServer: http.Server, forget: () => void): void {
  forget();
  nodeServer.emit('connection', socket);
  socket.resume();
}

class FrontConnection {
  /** Bytes read from the client and not yet written upstream. */
  private pending: Buffer = EMPTY;
  private upstream: net.Socket | null = null;
  /** A request was written to uWS whose response has not ended. */
  private inflight = false;
  /** Body bytes of the current request still to be written to uWS. */
  private bodyLeft = 0;
  private tunnel = false;
  private handedOver = false;
  private clientEnded = false;
  /** Why the client is not being read: the upstream pushes back, or pipelined requests wait. */
  private upstreamFull = false;
  private holding = false;
  /** uWS is not being read until the client drains. */
  private relayPaused = false;
  private readonly framer = new ResponseFramer();

  constructor(
    private readonly client: net.Socket,
    private readonly options: FrontOptions,
    private readonly forget: () => void,
  ) {
    client.on('data', this.onClientData);
    client.on('end', this.onClientEnd);
    client.on('error', this.onError);
    client.on('close', this.onClientClose);
    client.on('timeout', this.onTimeout);
    client.setTimeout(HEAD_WAIT_MS);
  }

  destroy(): void {
    this.client.destroy();
    this.releaseUpstream();
  }

  /**
   * Lets go of the uWS connection without closing it under uWS: a request already
   * written to it may not have been read yet, and uWS terminates the process when its
   * answer fails to write on a socket the peer closed (a unix socket reports that at
   * once, EPIPE) in a handler that attached no onAborted. So only our writing side is
   * shut: uWS answers into a reader that discards the bytes, sees the end, and closes.
   */
  private releaseUpstream(): void {
    const upstream = this.upstream;
    if (upstream === null) return;
    this.upstream = null;
    upstream.removeListener('data', this.onUpstreamData);
    upstream.on('data', discard);
    upstream.resume();
    upstream.end();
    const timer = setTimeout(() => upstream.destroy(), RELEASE_MS);
    timer.unref();
    upstream.once('close', () => clearTimeout(timer));
  }

  private readonly onClientData = (chunk: Buffer): void => {
    if (this.tunnel) {
      this.writeUpstream(chunk);
      return;
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.pump();
  };

  /** Writes what may go to uWS now: the current body, or the next request when none is in flight. */
  private pump(): void {
    while (!this.handedOver) {
      if (this.bodyLeft > 0) {
        if (this.pending.length === 0) return;
        const take = Math.min(this.bodyLeft, this.pending.length);
        this.writeUpstream(this.pending.subarray(0, take));
        this.pending = take === this.pending.length ? EMPTY : this.pending.subarray(take);
        this.bodyLeft -= take;
        continue;
      }
      if (this.inflight) {
        if (this.pending.length > MAX_HELD_BYTES && !this.holding) {
          this.holding = true;
          this.client.pause();
        }
        return;
      }
      if (this.pending.length === 0) {
        if (this.clientEnded) this.finish();
        return;
      }
      const scan = scanRequestHead(this.pending, 0);
      if (scan.kind === 'incomplete') {
        if (this.clientEnded) this.finish();
        return;
      }
      if (scan.kind === 'node') {
        this.handToNode();
        return;
      }
      this.upstream ??= this.connectUpstream();
      this.framer.begin(scan.head);
      this.inflight = true;
      this.writeUpstream(this.pending.subarray(0, scan.headEnd));
      this.pending = scan.headEnd === this.pending.length ? EMPTY : this.pending.subarray(scan.headEnd);
      this.bodyLeft = scan.bodyLength;
    }
  }

  private connectUpstream(): net.Socket {
    const upstream = net.connect({ path: this.options.uwsPath });
    // First on the connection, before any request: the client's own socket's addresses,
    // never a header the client sent.
    if (this.options.proxyProtocol) upstream.write(proxyV2Header(this.client));
    upstream.on('data', this.onUpstreamData);
    upstream.on('end', this.onUpstreamEnd);
    upstream.on('close', this.onUpstreamEnd);
    upstream.on('error', this.onError);
    return upstream;
  }

  private writeUpstream(bytes: Buffer): void {
    const upstream = this.upstream;
    // uWS already closed (it answered and closed before the body ended): nothing more to send it.
    if (upstream === null) return;
    if (upstream.write(bytes) || this.upstreamFull) return;
    this.upstreamFull = true;
    this.client.pause();
    upstream.once('drain', () => {
      this.upstreamFull = false;
      this.resumeClient();
    });
  }

  private resumeClient(): void {
    if (!this.upstreamFull && !this.holding && !this.handedOver) this.client.resume();
  }

  private readonly onUpstreamData = (chunk: Buffer): void => {
    let ended = false;
    if (!this.tunnel) {
      const framed = this.framer.feed(chunk);
      if (framed === 'tunnel') this.tunnel = true;
      else ended = framed === 'done';
    }
    this.client.write(chunk);
    // Backpressure past a large answer's worth of bytes, not at the stream's 16 KiB mark,
    // which paused and resumed the uWS socket after nearly every read of a large answer.
    if (this.client.writableLength > RELAY_HIGH_WATER && !this.relayPaused) {
      const upstream = this.upstream!;
      this.relayPaused = true;
      upstream.pause();
      this.client.once('drain', () => {
        this.relayPaused = false;
        upstream.resume();
      });
    }
    if (this.tunnel) {
      // Bytes the client sent behind the upgrade request belong to the new protocol.
      if (this.pending.length > 0) {
        this.writeUpstream(this.pending);
        this.pending = EMPTY;
      }
      this.client.setTimeout(0);
      return;
    }
    if (ended) {
      this.inflight = false;
      if (this.holding) {
        this.holding = false;
        this.resumeClient();
      }
      this.pump();
    }
  };

  /** uWS closed its side: after a complete answer (Connection: close, idle timeout) the client's connection ends too. */
  private readonly onUpstreamEnd = (): void => {
    if (this.handedOver || this.upstream === null) return;
    this.upstream = null;
    if (this.inflight && !this.tunnel && !this.framer.endsAtClose()) {
      // The answer was cut short: the client must not take it for a whole one.
      this.client.destroy();
      return;
    }
    this.client.end();
  };

  private readonly onClientEnd = (): void => {
    this.clientEnded = true;
    if (this.tunnel) {
      this.upstream?.end();
      return;
    }
    if (!this.inflight && this.bodyLeft === 0) this.pump();
  };

  /** The client sent all it will and every answer went out. */
  private finish(): void {
    this.upstream?.end();
    this.client.end();
  }

  private readonly onTimeout = (): void => {
    // Only between answers: a long response (a snapshot to a slow reader, an event stream) is not a stall.
    if (!this.inflight && !this.tunnel && this.bodyLeft === 0) this.handToNode();
  };

  private readonly onError = (): void => {
    this.destroy();
  };

  private readonly onClientClose = (): void => {
    this.releaseUpstream();
    this.forget();
  };

  /** node:http takes the connection from here on, with the bytes read and not yet answered. */
  private handToNode(): void {
    if (this.handedOver) return;
    this.handedOver = true;
    const client = this.client;
    client.removeListener('data', this.onClientData);
    client.removeListener('end', this.onClientEnd);
    client.removeListener('error', this.onError);
    client.removeListener('close', this.onClientClose);
    client.removeListener('timeout', this.onTimeout);
    client.setTimeout(0);
    this.forget();
    // Idle here (no request in flight), but released the same careful way.
    this.releaseUpstream();
    client.pause();
    if (this.pending.length > 0) client.unshift(this.pending);
    this.pending = EMPTY;
    // node:http would read the socket's handle directly (bypassing the stream) on a
    // socket never read before; this one was, and its unread bytes are in the stream's
    // buffer, so the server must read through the stream.
    const handle = (client as unknown as { _handle?: { _consumed?: boolean } })._handle;
    if (handle !== undefined && handle !== null) handle._consumed = true;
    this.options.nodeServer.emit('connection', client);
    client.resume();
  }
}
