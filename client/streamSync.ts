// client.streamSync(): an in-memory copy of the service's board (or of a filtered part
// of it) kept by the push stream (/api/v1/stream, described in /api/v1/asyncapi.json):
// an image of the rows, then a delta per change batch, each naming the clk it brings
// the copy to and the one before it (prev). The copy remembers the clk of the last
// message it applied; when the connection drops (a restart of the service, a load
// balancer sending it to another node of the same stream, a slow_consumer drop) it
// reconnects and subscribes with that clk, and gets only the changes after it. When the
// service cannot resume from it (too old, or another board's), it answers `status
// resync` and a fresh image, which replaces the copy: onResync says so. A delta whose
// prev is not the clk held (which the service never sends) is treated the same way: the
// copy subscribes again for a fresh image rather than hold a gap.
//
// This is the recommended way to keep a copy: a change reaches it within one batch,
// and a restart costs the changes missed, not a snapshot. BoardSync (boardSync.ts)
// polls the delta feed instead, for clients that cannot hold a WebSocket.
import type { DeltaRow, OddsRow } from './boardSync.ts';

/** The filter of a subscription: the /odds filters of the same names (comma lists as arrays). */
export interface StreamFilter {
  league?: string[];
  sportsbook?: string[];
  market?: string[];
  eventId?: string[];
  playerId?: string[];
}

/** The WebSocket constructor the copy uses (the browser's, Node 22's global one, or the `ws` package's). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

export interface StreamSyncOptions {
  filter?: StreamFilter;
  /** Sent as the `key` query parameter (a WebSocket cannot set X-Api-Key in a browser). */
  apiKey?: string;
  /** Heartbeats after this long without traffic (500-30,000 ms; default 5,000). */
  heartbeatMs?: number;
  /** Wait before reconnecting after the connection dropped, doubled per failed attempt up to 5 s (default 100 ms). */
  reconnectMs?: number;
  /** Default globalThis.WebSocket, else the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** The copy was replaced by a fresh image instead of resumed (the reason: the service's status detail, or the broken chain). */
  onResync?: (reason: string) => void;
  /** The connection dropped; the copy reconnects and resumes by itself. */
  onDisconnect?: (reason: string) => void;
  /** A resume after a reconnect went through with deltas only. */
  onResume?: () => void;
  /** Errors the copy cannot act on (a refused subscription: bad filter or key). */
  onError?: (error: Error) => void;
}

interface ServerMessage {
  op: 'image' | 'delta' | 'heartbeat' | 'status';
  id?: string;
  clk?: string;
  prev?: string;
  segment?: 'start' | 'more' | 'end';
  resync?: boolean;
  rows?: DeltaRow[];
  code?: string;
  detail?: string;
}

const SUBSCRIPTION_ID = 'sync';
const MAX_RECONNECT_MS = 5000;

export class StreamSync {
  /** The copy: rows by id, as /odds renders them. */
  readonly rows = new Map<string, OddsRow>();
  /** The clk of the last image or delta applied: where a reconnect resumes from. */
  clk: string | null = null;
  /** What happened since the start, added up. */
  readonly totals = { images: 0, deltas: 0, resumes: 0, resyncs: 0, reconnects: 0 };
  private socket: WebSocket | null = null;
  private imaging: OddsRow[] | null = null;
  private closed = false;
  private backoff: number;
  /** Resolvers of settle() calls, answered by the next heartbeat. */
  private settling: (() => void)[] = [];
  private firstImage: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private resuming = false;
  /** Deltas are ignored until the image asked for after a broken chain arrives (those in flight belong to the old subscription). */
  private imagePending = false;

  private constructor(
    private readonly url: string,
    private readonly options: StreamSyncOptions,
    private readonly WebSocketImpl: WebSocketConstructor,
  ) {
    this.backoff = options.reconnectMs ?? 100;
  }

  /** Connects and resolves once the first image is held. */
  static async open(baseUrl: string, options: StreamSyncOptions = {}): Promise<StreamSync> {
    const WebSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ?? ((await import('ws')).WebSocket as unknown as WebSocketConstructor);
    const url = new URL('/api/v1/stream', baseUrl.replace(/^http/, 'ws'));
    if (options.apiKey !== undefined) url.searchParams.set('key', options.apiKey);
    const sync = new StreamSync(url.toString(), options, WebSocketImpl);
    await new Promise<void>((resolve, reject) => {
      sync.firstImage = { resolve, reject };
      sync.connect();
    });
    return sync;
  }

  /** Resolves once every message the service sent before now was applied (a heartbeat round trip). */
  settle(): Promise<void> {
    return new Promise((resolve) => {
      this.settling.push(resolve);
      if (this.socket !== null && this.socket.readyState === 1) this.socket.send(JSON.stringify({ op: 'heartbeat' }));
    });
  }

  /** Closes the connection for good. */
  close(): void {
    this.closed = true;
    this.socket?.close();
    this.socket = null;
    for (const resolve of this.settling.splice(0)) resolve();
  }

  /**
   * Drops the connection as a network failure would: nothing more is read from it, and
   * the copy reconnects and resumes (for tests and drills).
   */
  dropConnection(): void {
    const socket = this.socket;
    if (socket === null) return;
    this.lost('dropped by the client');
    socket.close();
  }

  private connect(): void {
    if (this.closed) return;
    const socket = new this.WebSocketImpl(this.url);
    this.socket = socket;
    socket.binaryType = 'arraybuffer';
    socket.addEventListener('open', () => {
      this.backoff = this.options.reconnectMs ?? 100;
      this.resuming = this.clk !== null;
      this.subscribe(socket, this.clk);
      if (this.settling.length > 0) socket.send(JSON.stringify({ op: 'heartbeat' }));
    });
    socket.addEventListener('message', (event: MessageEvent) => {
      if (socket !== this.socket) return;
      const text = typeof event.data === 'string' ? event.data : new TextDecoder().decode(event.data as ArrayBuffer);
      this.receive(JSON.parse(text) as ServerMessage, socket);
    });
    socket.addEventListener('close', (event: CloseEvent) => {
      if (socket === this.socket) this.lost(event.reason || `closed (${event.code})`);
    });
    socket.addEventListener('error', () => {
      // a close event follows; it reconnects
    });
  }

  /** The connection is gone: reconnect after the backoff and resume from the clk held. */
  private lost(reason: string): void {
    this.socket = null;
    this.imaging = null;
    this.imagePending = false;
    if (this.closed) return;
    this.totals.reconnects++;
    this.options.onDisconnect?.(reason);
    const wait = this.backoff;
    this.backoff = Math.min(MAX_RECONNECT_MS, this.backoff * 2);
    setTimeout(() => this.connect(), wait);
  }

  private subscribe(socket: WebSocket, clk: string | null): void {
    const message: Record<string, unknown> = { op: 'subscribe', id: SUBSCRIPTION_ID, filter: this.options.filter ?? {} };
    if (clk !== null) message.clk = clk;
    if (this.options.heartbeatMs !== undefined) message.heartbeatMs = this.options.heartbeatMs;
    socket.send(JSON.stringify(message));
  }

  private receive(message: ServerMessage, socket: WebSocket): void {
    switch (message.op) {
      case 'heartbeat':
        // an image still arriving (its segments are sent one per turn): settled once it is whole
        if (this.imaging !== null || this.imagePending) return;
        for (const resolve of this.settling.splice(0)) resolve();
        return;
      case 'status':
        if (message.id !== undefined && message.id !== SUBSCRIPTION_ID) return;
        if (message.code === 'resync') {
          // a fresh image follows: it replaces the copy
          this.resuming = false;
          this.totals.resyncs++;
          this.options.onResync?.(message.detail ?? 'resync');
          return;
        }
        if (message.code === 'slow_consumer') return; // the service closes the connection: the copy resumes after it
        {
          const error = new Error(`stream ${message.code}: ${message.detail}`);
          if (this.firstImage !== null) {
            this.firstImage.reject(error);
            this.firstImage = null;
            this.close();
          } else this.options.onError?.(error);
        }
        return;
      case 'image': {
        if (message.id !== SUBSCRIPTION_ID) return;
        if (message.segment !== 'more' && message.segment !== 'end') this.imaging = [];
        this.imaging ??= [];
        for (const row of message.rows ?? []) this.imaging.push(row);
        if (message.segment !== 'end') return;
        this.rows.clear();
        for (const row of this.imaging) this.rows.set(row.id, row);
        this.imaging = null;
        this.imagePending = false;
        this.clk = message.clk ?? null;
        this.totals.images++;
        this.resuming = false;
        if (this.settling.length > 0) socket.send(JSON.stringify({ op: 'heartbeat' }));
        if (this.firstImage !== null) {
          this.firstImage.resolve();
          this.firstImage = null;
        }
        return;
      }
      case 'delta': {
        if (message.id !== SUBSCRIPTION_ID || this.imagePending) return;
        if (message.prev !== this.clk) {
          // never sent by the service; if it happens, a fresh image rather than a gap
          this.totals.resyncs++;
          this.options.onResync?.(`a delta followed ${message.prev} while the copy held ${this.clk}`);
          this.clk = null;
          this.imagePending = true;
          socket.send(JSON.stringify({ op: 'unsubscribe', id: SUBSCRIPTION_ID }));
          this.subscribe(socket, null);
          return;
        }
        for (const row of message.rows ?? []) {
          if (row.removed === true) this.rows.delete(row.id);
          else this.rows.set(row.id, row);
        }
        this.clk = message.clk ?? null;
        this.totals.deltas++;
        if (this.resuming) {
          this.resuming = false;
          this.totals.resumes++;
          this.options.onResume?.();
        }
        return;
      }
    }
  }
}
