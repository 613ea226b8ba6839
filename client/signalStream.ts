// client.signalStream(): the signal stream's WebSocket (/api/v1/stream/signals/ws,
// described in /api/v1/asyncapi.json) with typed subscriptions. A steam subscription
// hands each move to onMove. A group-topic subscription (fair_line, best_price, ev,
// middle) keeps the screen it follows: each message lists market groups whose records
// changed and their current records, and the copy replaces what it holds for those
// groups (middle: for their families, the same market at its other lines), so after
// every message `records` holds what the topic's route answers with the same filters.
//
//   const signals = await client.signalStream();
//   const lowHold = await signals.subscribe({ topic: 'best_price', maxHold: 0.02, filter: { league: ['nba'] } });
//   lowHold.records          // the low-hold screen, kept current
//   await signals.subscribe({ topic: 'steam', minPoints: 3, onMove: (move) => ... });
//
// When the connection drops it reconnects (backoff up to 5 s) and subscribes again: a
// group topic's first push after that is its full image, which the copy starts from
// afresh (onDisconnect says when); steam moves made while it was away are on /steam.
import type { components } from './schema.ts';
import type { WebSocketConstructor } from './streamSync.ts';

type Schemas = components['schemas'];
export type SignalTopic = 'steam' | 'fair_line' | 'best_price' | 'ev' | 'middle';
export type GroupTopic = Exclude<SignalTopic, 'steam'>;
export type SteamMove = Schemas['SteamMove'];

/** The record a group topic pushes (the topic's route's record). */
export interface SignalRecords {
  fair_line: Schemas['FairLine'];
  best_price: Schemas['BestPrice'];
  ev: Schemas['PositiveEv'];
  middle: Schemas['Middle'];
}

/** A subscribe's fields (the query of GET /api/v1/stream/signals in camelCase; a topic ignores what it does not use). */
export interface SignalRequest<T extends SignalTopic = SignalTopic> {
  topic: T;
  filter?: { league?: string[]; eventId?: string[]; sportsbook?: string[] };
  devig?: 'multiplicative' | 'additive' | 'power' | 'shin' | 'worst' | 'odds_ratio' | 'wpo' | 'balanced_book' | 'jensen_shannon';
  minEv?: number;
  maxHold?: number;
  minWidth?: number;
  maxCost?: number;
  minPoints?: number;
  minCents?: number;
  heartbeatMs?: number;
  /** steam: each move as it is seen. */
  onMove?: (move: SteamMove) => void;
  /** Group topics: after each message was applied, the groups it listed. */
  onChange?: (groups: string[]) => void;
}

export interface SignalStreamOptions {
  /** Sent as the `key` query parameter (a WebSocket cannot set X-Api-Key in a browser). */
  apiKey?: string;
  /** Wait before reconnecting, doubled per failed attempt up to 5 s (default 100 ms). */
  reconnectMs?: number;
  /** Default globalThis.WebSocket, else the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** The connection dropped (the reason); it reconnects and subscribes again by itself. */
  onDisconnect?: (reason: string) => void;
  /** Errors about an open subscription the service reported (a status with its id). */
  onError?: (error: Error) => void;
}

interface ServerMessage {
  op: 'subscribed' | 'signal' | 'heartbeat' | 'status';
  id?: string;
  topic?: SignalTopic;
  move?: SteamMove;
  groups?: string[];
  records?: { id: string; groupId?: string }[];
  code?: string;
  detail?: string;
}

/** The market group id without its line ({eventId}:{subtype}:{period}:{line}:{scope}): a middle's family. */
function familyOfGroup(groupId: string): string {
  const parts = groupId.split(':');
  parts.splice(parts.length - 2, 1);
  return parts.join(':');
}

/** A middle's family: its id without the two lines. */
function familyOfMiddle(id: string): string {
  return id.split(':').slice(0, -2).join(':');
}

export class SignalSubscription<T extends SignalTopic = SignalTopic> {
  /** Group topics: the records held, by market group (middle: by family). */
  readonly held = new Map<string, (T extends GroupTopic ? SignalRecords[T] : never)[]>();
  /** Messages applied since the start. */
  messages = 0;
  /** @internal */ opened: { resolve: () => void; reject: (error: Error) => void } | null = null;

  constructor(
    readonly id: string,
    readonly request: SignalRequest<T>,
    private readonly stream: SignalStream,
  ) {}

  get topic(): T {
    return this.request.topic;
  }

  /** Group topics: every record held, as the topic's route lists them (its order aside). */
  get records(): (T extends GroupTopic ? SignalRecords[T] : never)[] {
    return [...this.held.values()].flat();
  }

  unsubscribe(): void {
    this.stream.unsubscribe(this);
  }

  /** @internal */
  apply(message: ServerMessage): void {
    this.messages++;
    if (message.move !== undefined) {
      this.request.onMove?.(message.move);
      return;
    }
    const middle = this.topic === 'middle';
    const keyOfGroup = middle ? familyOfGroup : (g: string) => g;
    const keyOfRecord = (r: { id: string; groupId?: string }) => (middle ? familyOfMiddle(r.id) : (r.groupId ?? r.id));
    for (const group of message.groups ?? []) this.held.delete(keyOfGroup(group));
    for (const record of message.records ?? []) {
      const key = keyOfRecord(record);
      const list = this.held.get(key);
      if (list === undefined) this.held.set(key, [record as never]);
      else list.push(record as never);
    }
    this.request.onChange?.(message.groups ?? []);
  }
}

const MAX_RECONNECT_MS = 5000;

export class SignalStream {
  private socket: WebSocket | null = null;
  private readonly subs = new Map<string, SignalSubscription>();
  private closed = false;
  private backoff: number;
  private nextId = 1;
  private settling: (() => void)[] = [];
  /** What happened since the start, added up. */
  readonly totals = { messages: 0, reconnects: 0 };

  private constructor(
    private readonly url: string,
    private readonly options: SignalStreamOptions,
    private readonly WebSocketImpl: WebSocketConstructor,
  ) {
    this.backoff = options.reconnectMs ?? 100;
  }

  /** Connects; resolves once the connection is open. */
  static async open(baseUrl: string, options: SignalStreamOptions = {}): Promise<SignalStream> {
    const WebSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ?? ((await import('ws')).WebSocket as unknown as WebSocketConstructor);
    const url = new URL('/api/v1/stream/signals/ws', baseUrl.replace(/^http/, 'ws'));
    if (options.apiKey !== undefined) url.searchParams.set('key', options.apiKey);
    const stream = new SignalStream(url.toString(), options, WebSocketImpl);
    await new Promise<void>((resolve, reject) => stream.connect(resolve, reject));
    return stream;
  }

  /** Opens a subscription; resolves once the service said it is open, rejects with its refusal (a bad filter, a key error, too many subscriptions). */
  subscribe<T extends SignalTopic>(request: SignalRequest<T>): Promise<SignalSubscription<T>> {
    const sub = new SignalSubscription<T>(`s${this.nextId++}`, request, this);
    this.subs.set(sub.id, sub as unknown as SignalSubscription);
    return new Promise((resolve, reject) => {
      sub.opened = { resolve: () => resolve(sub), reject };
      this.sendSubscribe(sub as unknown as SignalSubscription);
    });
  }

  /** @internal */
  unsubscribe(sub: SignalSubscription): void {
    if (!this.subs.delete(sub.id)) return;
    this.sendJson({ op: 'unsubscribe', id: sub.id });
  }

  /** Resolves once every message the service sent before now was applied (a heartbeat round trip). */
  settle(): Promise<void> {
    return new Promise((resolve) => {
      this.settling.push(resolve);
      this.sendJson({ op: 'heartbeat' });
    });
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
    this.socket = null;
    for (const resolve of this.settling.splice(0)) resolve();
  }

  private sendJson(message: Record<string, unknown>): void {
    if (this.socket !== null && this.socket.readyState === 1) this.socket.send(JSON.stringify(message));
  }

  private sendSubscribe(sub: SignalSubscription): void {
    const { onMove: _move, onChange: _change, ...fields } = sub.request;
    this.sendJson({ op: 'subscribe', id: sub.id, ...fields });
  }

  private connect(opened?: () => void, failed?: (error: Error) => void): void {
    if (this.closed) return;
    const socket = new this.WebSocketImpl(this.url);
    this.socket = socket;
    socket.binaryType = 'arraybuffer';
    let open = false;
    socket.addEventListener('open', () => {
      open = true;
      this.backoff = this.options.reconnectMs ?? 100;
      // a group topic's first push after subscribing again is its full image: start afresh
      for (const sub of this.subs.values()) {
        sub.held.clear();
        this.sendSubscribe(sub);
      }
      opened?.();
    });
    socket.addEventListener('message', (event: MessageEvent) => {
      if (socket !== this.socket) return;
      const text = typeof event.data === 'string' ? event.data : new TextDecoder().decode(event.data as ArrayBuffer);
      this.receive(JSON.parse(text) as ServerMessage);
    });
    socket.addEventListener('close', (event: CloseEvent) => {
      if (socket !== this.socket) return;
      this.socket = null;
      if (!open && failed !== undefined) {
        failed(new Error(`the signal stream refused the connection (${event.code})`));
        return;
      }
      if (this.closed) return;
      this.totals.reconnects++;
      this.options.onDisconnect?.(event.reason || `closed (${event.code})`);
      const wait = this.backoff;
      this.backoff = Math.min(MAX_RECONNECT_MS, this.backoff * 2);
      setTimeout(() => this.connect(), wait);
    });
    socket.addEventListener('error', () => {
      // a close event follows
    });
  }

  private receive(message: ServerMessage): void {
    const sub = message.id === undefined ? undefined : this.subs.get(message.id);
    switch (message.op) {
      case 'heartbeat':
        for (const resolve of this.settling.splice(0)) resolve();
        return;
      case 'subscribed':
        sub?.opened?.resolve();
        if (sub !== undefined) sub.opened = null;
        return;
      case 'signal':
        this.totals.messages++;
        sub?.apply(message);
        return;
      case 'status': {
        const error = new Error(`signal stream ${message.code}: ${message.detail}`);
        if (sub?.opened != null) {
          this.subs.delete(sub.id);
          sub.opened.reject(error);
          sub.opened = null;
        } else if (message.code !== 'slow_consumer') {
          this.options.onError?.(error);
        }
        return;
      }
    }
  }
}
