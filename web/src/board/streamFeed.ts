// The board fed by the push stream (GET /api/v1/stream, described at /api/v1/asyncapi.json):
// one WebSocket, one subscription to the whole board. Its image is the bootstrap, its
// deltas are the changes; each delta's prev must be the clk of the message applied
// before it, else something was missed and the feed subscribes again from the clk it
// holds (the service then sends only what changed after it). A resync (the clk can no
// longer be resumed from) brings a fresh image, which replaces the page's board.
//
// The feed reconnects by itself with backoff and resumes from the last clk applied; a
// socket that stays silent for several heartbeat intervals is taken for dead and
// replaced. Only when the very first WebSocket cannot connect at all (a proxy that does
// not pass WebSockets, say) does the page fall back to polling the HTTP sync contract
// (PollingFeed), for good.
//
// Events (teams, start times, for the filters and labels) come from
// /api/v1/events/active?include_futures=true, the events that have odds on the board.
// Before the first socket, a one-row /odds request checks the key: a 401 there means
// "ask for a key", and no socket is opened without one. Browsers cannot set headers on a WebSocket, so the key travels as
// the `key` query parameter of the stream URL, which is built from this page's own
// origin: the key only ever goes to this service.
import { ApiError, getJson, storedKey } from './api.ts';
import { PollingFeed, type BoardBootstrap, type BoardFeed, type FeedState } from './feed.ts';
import type { Envelope, EventInfo, OddsRow } from './types.ts';

const STREAM_PATH = '/api/v1/stream';
/** The service sends a heartbeat after this long without other traffic. */
const HEARTBEAT_MS = 5000;
/** Silence for this long means the socket is dead (three heartbeats missed). */
const DEAD_AFTER_MS = 3 * HEARTBEAT_MS;
/**
 * A heartbeat request this often: the service closes sockets it has heard nothing from
 * for two minutes, and a pure listener would otherwise say nothing.
 */
const CLIENT_HEARTBEAT_MS = 30_000;
const EVENTS_PAGE = 1000;

interface StreamMessage {
  op: 'image' | 'delta' | 'heartbeat' | 'status';
  id?: string;
  clk?: string;
  prev?: string;
  segment?: 'start' | 'more' | 'end';
  resync?: true;
  rows?: OddsRow[];
  code?: string;
  detail?: string;
}

function backoffMs(failures: number): number {
  return Math.min(5000, 250 * 2 ** Math.min(failures, 5));
}

export class StreamFeed implements BoardFeed {
  /** 'polling' once the WebSocket could not connect at all and the page fell back. */
  source: 'stream' | 'polling' = 'stream';
  private polling: PollingFeed | null = null;
  private running = false;
  private socket: WebSocket | null = null;
  /** The subscription whose messages count; messages of an earlier one are ignored. */
  private subId = '';
  private subCount = 0;
  /** The clk of the last image end or delta applied; null: the next subscription needs an image. */
  private clk: string | null = null;
  private imageRows: OddsRow[] | null = null;
  private events: EventInfo[] | null = null;
  /** Newest row change seen (ISO-8601), the board's as-of point for the health bar. */
  private updated = '';
  private everOpened = false;
  private failures = 0;
  private lastHeardAt = 0;
  private lastAskedAt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private watchdog: ReturnType<typeof setInterval> | null = null;
  /** The bootstrap() caller, waiting for the first complete image. */
  private waiting: { resolve: (boot: BoardBootstrap) => void; reject: (error: unknown) => void } | null = null;
  private readonly changeListeners: ((rows: readonly OddsRow[]) => void)[] = [];
  private readonly stateListeners: ((state: FeedState) => void)[] = [];
  private readonly resetListeners: ((bootstrap: BoardBootstrap) => void)[] = [];

  onChange(listener: (rows: readonly OddsRow[]) => void): void {
    this.changeListeners.push(listener);
  }

  onState(listener: (state: FeedState) => void): void {
    this.stateListeners.push(listener);
  }

  onReset(listener: (bootstrap: BoardBootstrap) => void): void {
    this.resetListeners.push(listener);
  }

  /** Connects and resolves with the subscription's first complete image. */
  bootstrap(): Promise<BoardBootstrap> {
    if (this.polling !== null) return this.polling.bootstrap();
    this.emitState({ kind: 'loading' });
    this.running = true;
    return new Promise<BoardBootstrap>((resolve, reject) => {
      this.waiting = { resolve, reject };
      void this.connect();
    });
  }

  start(): void {
    if (this.polling !== null) return this.polling.start();
    if (this.running && (this.socket !== null || this.retryTimer !== null)) return;
    this.running = true;
    if (this.socket === null && this.retryTimer === null) void this.connect();
  }

  stop(): void {
    this.running = false;
    this.polling?.stop();
    this.clearRetry();
    this.closeSocket();
  }

  /** Tries again at once (after the key changed, say). */
  retryNow(): void {
    if (this.polling !== null) return this.polling.retryNow();
    if (!this.running || this.socket !== null) return;
    this.clearRetry();
    void this.connect();
  }

  private async connect(): Promise<void> {
    this.retryTimer = null;
    try {
      if (this.events === null) this.events = await this.loadEvents();
      // Events are reference data, open to all; one row of /odds checks the key first, so
      // a socket is never opened without the key a keyed service needs (browsers do not
      // tell a refused handshake's status to the page, so it could not say "key needed").
      if (!this.everOpened) await getJson<Envelope<OddsRow>>('/api/v1/odds?limit=1');
    } catch (error) {
      this.failed(error instanceof ApiError ? error : new ApiError(0, 'error', String(error)));
      return;
    }
    if (!this.running || this.socket !== null) return;
    const key = storedKey();
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${scheme}//${location.host}${STREAM_PATH}${key === '' ? '' : `?key=${encodeURIComponent(key)}`}`;
    let socket: WebSocket;
    try {
      socket = new WebSocket(url);
    } catch {
      // refused before any connection (the URL or the page's policy): nothing to retry
      if (!this.everOpened) this.fallBack();
      else this.failed(new ApiError(0, 'error', 'the stream URL was refused'));
      return;
    }
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      opened = true;
      this.everOpened = true;
      this.lastHeardAt = this.lastAskedAt = performance.now();
      this.subscribe();
      // a resume with nothing to catch up on sends nothing: the board is live as it is
      if (this.clk !== null) this.emitLive();
      this.watchdog ??= setInterval(() => this.checkAlive(), 1000);
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket || typeof event.data !== 'string') return;
      this.lastHeardAt = performance.now();
      let message: StreamMessage;
      try {
        message = JSON.parse(event.data) as StreamMessage;
      } catch {
        return; // the service sends JSON text frames only
      }
      this.handle(message);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (!opened && !this.everOpened) this.fallBack();
      else this.failed(new ApiError(0, 'disconnected', 'the stream connection closed'));
    };
  }

  /** The events that have odds on the board, every page. */
  private async loadEvents(): Promise<EventInfo[]> {
    const events: EventInfo[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/api/v1/events/active?include_futures=true&limit=${EVENTS_PAGE}` + (cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`);
      const page: Envelope<EventInfo> = await getJson<Envelope<EventInfo>>(path);
      for (const e of page.data) events.push({ id: e.id, league: e.league, startTime: e.startTime, status: e.status, homeTeamId: e.homeTeamId, awayTeamId: e.awayTeamId });
      cursor = page.nextCursor;
    } while (cursor !== null);
    return events;
  }

  /** A new subscription to the whole board, resuming from the clk held when there is one. */
  private subscribe(): void {
    const socket = this.socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN) return;
    if (this.subId !== '') socket.send(JSON.stringify({ op: 'unsubscribe', id: this.subId }));
    this.subId = `board-${++this.subCount}`;
    this.imageRows = null;
    const request: Record<string, unknown> = { op: 'subscribe', id: this.subId, filter: {}, heartbeatMs: HEARTBEAT_MS, conflateMs: 0, format: 'json', oddsFormat: 'all' };
    if (this.clk !== null) request.clk = this.clk;
    socket.send(JSON.stringify(request));
  }

  private handle(message: StreamMessage): void {
    if (message.op === 'heartbeat') return;
    if (message.op === 'status') return this.status(message);
    if (message.id !== this.subId) return; // an earlier subscription's tail
    if (message.op === 'image') {
      if (message.segment === 'start' || this.imageRows === null) this.imageRows = [];
      for (const row of message.rows ?? []) this.imageRows.push(row);
      if (message.segment !== 'end') return;
      const rows = this.imageRows;
      this.imageRows = null;
      this.clk = message.clk!;
      this.failures = 0;
      this.noteNewest(rows);
      const boot: BoardBootstrap = { rows, events: this.events ?? [], updated: this.updated };
      const waiting = this.waiting;
      this.waiting = null;
      if (waiting !== null) waiting.resolve(boot);
      else for (const listener of this.resetListeners) listener(boot);
      this.emitLive();
      return;
    }
    if (message.op === 'delta') {
      if (this.clk === null) return; // no image yet: the image will hold this change
      if (message.prev !== this.clk) {
        // a gap: ask for what changed after the last clk applied
        this.subscribe();
        return;
      }
      this.clk = message.clk!;
      this.failures = 0;
      const rows = message.rows ?? [];
      if (rows.length > 0) {
        for (const listener of this.changeListeners) listener(rows);
        if (this.noteNewest(rows)) this.emitLive();
      }
    }
  }

  private status(message: StreamMessage): void {
    if (message.id !== undefined && message.id !== this.subId) return;
    switch (message.code) {
      case 'resync':
        // the clk held cannot be resumed from: a fresh image follows and replaces the board
        this.clk = null;
        return;
      case 'slow_consumer':
        return; // the service closes the connection; the reconnect resumes from the clk held
      case 'missing_api_key':
      case 'invalid_api_key':
        this.emitState({ kind: 'needs-key', error: message.detail ?? message.code });
        this.closeSocket();
        this.scheduleRetry();
        return;
      default:
        // rate_limited, or a subscription the service refused: try again later
        this.closeSocket();
        this.failed(new ApiError(0, message.code ?? 'status', message.detail ?? ''));
    }
  }

  /** Every second: a dead socket is replaced; a quiet one is asked for a heartbeat. */
  private checkAlive(): void {
    const socket = this.socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN) return;
    const now = performance.now();
    if (now - this.lastHeardAt > DEAD_AFTER_MS) {
      this.closeSocket();
      this.failed(new ApiError(0, 'timeout', `no message for ${DEAD_AFTER_MS / 1000} s`));
      return;
    }
    if (now - this.lastAskedAt > CLIENT_HEARTBEAT_MS) {
      this.lastAskedAt = now;
      socket.send(JSON.stringify({ op: 'heartbeat' }));
    }
  }

  private failed(error: ApiError): void {
    if (!this.running) return;
    if (error.status === 401) {
      this.emitState({ kind: 'needs-key', error: error.message });
      if (this.waiting !== null) {
        // the caller shows "key needed"; the retries below load the board later
        const waiting = this.waiting;
        this.waiting = null;
        waiting.reject(error);
      }
    } else this.emitState({ kind: 'retrying', error: error.message, inMs: backoffMs(this.failures + 1) });
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (!this.running) return;
    this.failures++;
    this.clearRetry();
    this.retryTimer = setTimeout(() => void this.connect(), backoffMs(this.failures));
  }

  /** The first WebSocket never opened: this page polls the HTTP sync contract instead. */
  private fallBack(): void {
    this.source = 'polling';
    this.clearRetry();
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.watchdog = null;
    const polling = new PollingFeed();
    this.polling = polling;
    polling.onChange((rows) => {
      for (const listener of this.changeListeners) listener(rows);
    });
    polling.onState((state) => this.emitState(state));
    polling.onReset((boot) => {
      for (const listener of this.resetListeners) listener(boot);
    });
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting !== null) {
      polling.bootstrap().then(
        (boot) => {
          waiting.resolve(boot);
          if (this.running) polling.start();
        },
        (error: unknown) => {
          waiting.reject(error);
          if (this.running) polling.start();
        },
      );
    } else if (this.running) polling.start();
  }

  private closeSocket(): void {
    const socket = this.socket;
    this.socket = null;
    if (socket !== null) socket.close();
  }

  private clearRetry(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** Moves the as-of point to the newest row of the batch; says whether it moved. */
  private noteNewest(rows: readonly OddsRow[]): boolean {
    let newest = this.updated;
    for (const row of rows) if (row.updated > newest) newest = row.updated;
    if (newest === this.updated) return false;
    this.updated = newest;
    return true;
  }

  private emitLive(): void {
    this.emitState({ kind: 'live', updated: this.updated, source: 'stream' });
  }

  private emitState(state: FeedState): void {
    for (const listener of this.stateListeners) listener(state);
  }
}
