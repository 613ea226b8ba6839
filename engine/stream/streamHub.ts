// The push stream's core: subscriptions to filtered views of the board, fed from the
// engine's change notifications. Transport-free: a client is a StreamSink (the
// WebSocket route and the SSE route each adapt their connection to it).
//
// What a subscription receives: an image (its rows as /odds serves them, in segments of
// at most 1,000 rows, at one board sequence), then deltas, each naming the board
// sequence it brings the client to (clk) and the one before it (prev), so a client can
// check that the chain is unbroken. A resume (a clk this board issued, still within
// what the board can answer) gets only the rows changed after it; anything else gets a
// fresh image marked resync.
//
// Fan-out: subscriptions with the same filter share one group (one compiled matcher);
// for each applied batch, each group finds its changed rows once and renders them once
// per wire format and odds format, and every subscription of the group gets those bytes
// behind its own small envelope.
//
// Conflation keeps nothing per row: a conflating subscription only remembers the
// point its client is at (the clk of its last message) and that something changed; when
// its interval is up, one delta query (rows of its filter changed after that point, the
// delta feed's own query) yields each changed row's latest state. So memory per
// subscription is constant whatever the rate. A client whose socket pushes back is
// conflated the same way (at most one delta a second) until it drains; if its queued
// bytes still pass the cap, it is told slow_consumer and disconnected. Nothing is ever
// silently skipped: a message the transport would drop ends the connection instead.
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine.ts';
import { formatCode, ODDS_FORMATS, type OddsFormat } from '../rowJson.ts';
import { SLOT_LIVE, SLOT_TOMBSTONE } from '../oddsStore.ts';
import type { ClockPoint, ClockTokens } from './streamClock.ts';
import { CompiledFilter, filterKey, oddsFilterOf, type StreamFilter } from './streamFilter.ts';
import { plainMessage, rowsMessage, rowsMsgpack, type OutgoingMessage, type ServerOp, type WireFormat } from './streamMessages.ts';

/** Rows per image segment and per delta message of a catch-up. */
export const SEGMENT_ROWS = 1000;
/** How often a pushed-back client gets its conflated delta. */
const BACKED_UP_INTERVAL_MS = 1000;

export type SinkResult = 'sent' | 'backpressure' | 'dropped';

/** One client connection as the hub sees it. */
export interface StreamSink {
  send(message: OutgoingMessage): SinkResult;
  /** Bytes queued for the client and not yet written to its socket. */
  bufferedAmount(): number;
  /** Ends the connection (after a status message saying why). */
  close(reason: 'slow_consumer'): void;
}

export interface SubscribeRequest {
  id: string;
  filter: StreamFilter;
  /** The clk of the last message the client applied (resume), or null for a fresh image. */
  clk: string | null;
  /** 500-30,000. */
  heartbeatMs: number;
  /** 0: a delta per applied batch; otherwise at most one delta per this many ms. */
  conflateMs: number;
  format: WireFormat;
  oddsFormat: OddsFormat;
}

export type StatusCode = 'invalid_subscription' | 'slow_consumer' | 'resync' | 'invalid_parameter' | 'missing_parameter' | 'invalid_api_key' | 'missing_api_key' | 'rate_limited';

export interface StreamHubOptions {
  tokens: ClockTokens;
  /** Queued bytes past which a client is disconnected as a slow consumer. */
  bufferCapBytes: number;
  /** Timer resolution for heartbeats and conflation (default 50 ms). */
  tickMs?: number;
  /** Wall-clock milliseconds for heartbeats and conflation intervals (the board clock may be frozen). */
  wallNow?: () => number;
}

export interface StreamStats {
  clients: number;
  subscriptions: number;
  groups: number;
  /** Subscriptions that are holding back changes right now (conflating, or their client pushed back). */
  conflating: number;
  backedUpClients: number;
  slowConsumerDrops: number;
  resyncs: number;
  resumes: number;
  messages: number;
  bytes: number;
}

interface Group {
  key: string;
  compiled: CompiledFilter;
  subs: Set<Subscription>;
}

class Subscription {
  /** Where the client stands: the point of the last image or delta it was sent. */
  point: ClockPoint = { seq: 0, time: 0 };
  clk = '';
  /** Something it follows changed since `point` and was not sent yet. */
  dirty = false;
  lastFlushAt = 0;
  readonly formatCode: number;

  constructor(
    readonly id: string,
    readonly client: StreamClient,
    readonly group: Group,
    readonly request: SubscribeRequest,
  ) {
    this.formatCode = formatCode(request.oddsFormat);
  }
}

/** A connected client: its subscriptions, and whether its socket is pushing back. */
export class StreamClient {
  readonly subs = new Map<string, Subscription>();
  backedUp = false;
  closed = false;
  lastSentAt: number;
  /** Heartbeats and connection-level statuses use the wire format of the latest subscribe. */
  format: WireFormat = 'json';

  constructor(
    private readonly hub: StreamHub,
    readonly sink: StreamSink,
  ) {
    this.lastSentAt = hub.wallNow();
  }

  subscribe(request: SubscribeRequest): void {
    this.hub.subscribe(this, request);
  }

  unsubscribe(id: string): boolean {
    return this.hub.unsubscribe(this, id);
  }

  /** The client asked for a heartbeat: answered at once. */
  heartbeat(): void {
    this.hub.sendHeartbeat(this);
  }

  /** A status message (errors found by the caller, e.g. an invalid subscribe). */
  status(code: StatusCode, detail: string, id?: string, param?: string | null): void {
    this.hub.sendStatus(this, code, detail, id, param);
  }

  /** The socket wrote what was queued. */
  drained(): void {
    this.hub.drained(this);
  }

  /** The connection is gone. */
  disconnected(): void {
    this.hub.disconnect(this);
  }

  heartbeatMs(): number {
    let ms = Infinity;
    for (const sub of this.subs.values()) if (sub.request.heartbeatMs < ms) ms = sub.request.heartbeatMs;
    return ms;
  }
}

/** Per batch and group: the changed rows rendered once per (wire format, odds format). */
class RenderedRows {
  private readonly json: (Buffer | undefined)[] = [];
  private readonly msgpack: (Buffer | undefined)[] = [];

  constructor(
    private readonly engine: OddsEngine,
    private readonly slots: Int32Array,
    private readonly count: number,
  ) {}

  get(format: WireFormat, code: number): Buffer {
    let json = this.json[code];
    if (json === undefined) this.json[code] = json = this.engine.fragments.join(this.slots, this.count, code);
    if (format === 'json') return json;
    let packed = this.msgpack[code];
    if (packed === undefined) this.msgpack[code] = packed = rowsMsgpack(json);
    return packed;
  }
}

export class StreamHub implements ChangeListener {
  readonly wallNow: () => number;
  private readonly tokens: ClockTokens;
  private readonly bufferCap: number;
  private readonly groups = new Map<string, Group>();
  private readonly clients = new Set<StreamClient>();
  private readonly timer: NodeJS.Timeout;
  /** Rows changed in the batch being applied, each once (stamp = batch number). */
  private pending: Int32Array = new Int32Array(1024);
  private pendingCount = 0;
  private stamps: Uint32Array = new Uint32Array(1024);
  private batch = 1;
  private matched: Int32Array = new Int32Array(1024);
  private readonly counters = { slowConsumerDrops: 0, resyncs: 0, resumes: 0, messages: 0, bytes: 0 };
  /**
   * Read at scrape time by the composition root's metrics, written on the send path as
   * plain array increments: messages and bytes handed to sockets by wire format (index
   * 0 JSON text, SSE included; 1 MessagePack), and deltas held back to be folded into a
   * later one (index 0 for the subscription's conflation interval, 1 because its client
   * pushed back).
   */
  readonly sentMessages = new Float64Array(2);
  readonly sentBytes = new Float64Array(2);
  readonly heldBack = new Float64Array(2);
  /** Told of each client dropped as a slow consumer (the structured log); null: nobody. */
  onSlowConsumer: ((queuedBytes: number, subscriptions: number) => void) | null = null;

  constructor(
    private readonly engine: OddsEngine,
    options: StreamHubOptions,
  ) {
    this.tokens = options.tokens;
    this.bufferCap = options.bufferCapBytes;
    this.wallNow = options.wallNow ?? (() => performance.now());
    this.timer = setInterval(() => this.tick(), options.tickMs ?? 50);
    this.timer.unref();
  }

  connect(sink: StreamSink): StreamClient {
    const client = new StreamClient(this, sink);
    this.clients.add(client);
    return client;
  }

  /** The clk of the board as it is now. */
  currentClk(): string {
    return this.tokens.issue(this.point());
  }

  stats(): StreamStats {
    let subscriptions = 0;
    let conflating = 0;
    let backedUpClients = 0;
    for (const client of this.clients) {
      subscriptions += client.subs.size;
      if (client.backedUp) backedUpClients++;
      for (const sub of client.subs.values()) if (sub.dirty) conflating++;
    }
    return { clients: this.clients.size, subscriptions, groups: this.groups.size, conflating, backedUpClients, ...this.counters };
  }

  close(): void {
    clearInterval(this.timer);
    for (const client of [...this.clients]) this.disconnect(client);
  }

  // ---- engine listener -------------------------------------------------------------

  rowChanged(slot: number, _kind: ChangeKind): void {
    if (this.groups.size === 0) return;
    if (slot >= this.stamps.length) this.stamps = grownU32(this.stamps, slot + 1);
    if (this.stamps[slot] === this.batch) return;
    this.stamps[slot] = this.batch;
    if (this.pendingCount === this.pending.length) this.pending = grownI32(this.pending, this.pendingCount + 1);
    this.pending[this.pendingCount++] = slot;
  }

  changesApplied(): void {
    const count = this.pendingCount;
    this.pendingCount = 0;
    if (++this.batch === 0xffffffff) {
      this.stamps.fill(0);
      this.batch = 1;
    }
    if (count === 0 || this.groups.size === 0) return;
    const s = this.engine.store;
    // Change order: a row changed twice in the batch sits at its last change.
    const slots = this.pending.subarray(0, count).sort((a, b) => s.seq[a]! - s.seq[b]!);
    const point = this.point();
    const clk = this.tokens.issue(point);
    if (this.matched.length < count) this.matched = new Int32Array(count);
    for (const group of this.groups.values()) {
      let matched = 0;
      for (let i = 0; i < count; i++) if (group.compiled.matches(slots[i]!)) this.matched[matched++] = slots[i]!;
      if (matched === 0) continue;
      const rendered = new RenderedRows(this.engine, this.matched, matched);
      for (const sub of group.subs) {
        if (sub.request.conflateMs > 0 || sub.client.backedUp || sub.dirty) {
          this.heldBack[sub.client.backedUp ? 1 : 0]!++;
          sub.dirty = true;
          continue;
        }
        this.sendRows(sub, 'delta', { op: 'delta', id: sub.id, clk, prev: sub.clk }, rendered.get(sub.request.format, sub.formatCode), clk, point);
      }
    }
  }

  // ---- subscriptions ---------------------------------------------------------------

  subscribe(client: StreamClient, request: SubscribeRequest): void {
    if (client.closed) return;
    if (client.subs.has(request.id)) {
      this.sendStatus(client, 'invalid_subscription', `a subscription with id ${request.id} is already open on this connection; unsubscribe it first`, request.id, 'id');
      return;
    }
    client.format = request.format;
    const key = filterKey(request.filter);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { key, compiled: new CompiledFilter(request.filter, this.engine.store), subs: new Set() };
      this.groups.set(key, group);
    }
    const sub = new Subscription(request.id, client, group, request);
    group.subs.add(sub);
    client.subs.set(request.id, sub);
    sub.lastFlushAt = this.wallNow();

    if (request.clk !== null) {
      const from = this.resumable(request.clk);
      if (from !== null) {
        this.counters.resumes++;
        sub.point = from;
        sub.clk = request.clk;
        this.catchUp(sub);
        return;
      }
      this.counters.resyncs++;
      this.sendStatus(client, 'resync', 'the clk cannot be resumed from (too old for the changes this service still holds, or not issued by this board): a fresh image follows', request.id);
      if (client.closed) return;
    }
    this.sendImage(sub, request.clk !== null);
  }

  unsubscribe(client: StreamClient, id: string): boolean {
    const sub = client.subs.get(id);
    if (sub === undefined) return false;
    client.subs.delete(id);
    this.leaveGroup(sub);
    return true;
  }

  disconnect(client: StreamClient): void {
    if (client.closed) return;
    client.closed = true;
    for (const sub of client.subs.values()) this.leaveGroup(sub);
    client.subs.clear();
    this.clients.delete(client);
  }

  drained(client: StreamClient): void {
    if (client.closed || !client.backedUp) return;
    if (client.sink.bufferedAmount() > 0) return;
    client.backedUp = false;
    const now = this.wallNow();
    for (const sub of client.subs.values()) {
      if (sub.dirty && (sub.request.conflateMs === 0 || now - sub.lastFlushAt >= sub.request.conflateMs)) this.catchUp(sub);
      if (client.closed || client.backedUp) return;
    }
  }

  sendHeartbeat(client: StreamClient): void {
    this.send(client, { op: 'heartbeat', resumeClk: null, bytes: plainMessage(client.format, { op: 'heartbeat', clk: this.currentClk() }), binary: client.format === 'msgpack' });
  }

  sendStatus(client: StreamClient, code: StatusCode, detail: string, id?: string, param?: string | null): void {
    const message: Record<string, unknown> = { op: 'status' };
    if (id !== undefined) message.id = id;
    message.code = code;
    message.detail = detail;
    if (param !== undefined && param !== null) message.param = param;
    this.send(client, { op: 'status', resumeClk: null, bytes: plainMessage(client.format, message), binary: client.format === 'msgpack' });
  }

  // ---- sending ---------------------------------------------------------------------

  /** The board's sequence and time now. */
  private point(): ClockPoint {
    return { seq: this.engine.seq, time: Math.floor(this.engine.asOf()) };
  }

  /**
   * The point a resume may start from, or null (resync): the token must be this board's,
   * not ahead of it, and not older than the delta feed's horizon (before it, removed
   * rows may have been forgotten).
   */
  private resumable(clk: string): ClockPoint | null {
    const point = this.tokens.read(clk);
    if (point === null) return null;
    if (point.seq > this.engine.seq) return null;
    if (point.time < this.engine.deltaHorizon()) return null;
    return point;
  }

  /** The subscription's rows as /odds serves them, at one board sequence, in segments. */
  private sendImage(sub: Subscription, resync: boolean): void {
    const point = this.point();
    const clk = this.tokens.issue(point);
    const filter = oddsFilterOf(sub.group.compiled.filter);
    const odds = this.engine.odds;
    let afterId: string | null = null;
    let first = true;
    for (;;) {
      const page = odds.page(filter, afterId, SEGMENT_ROWS);
      const rows = odds.render(page, sub.request.oddsFormat);
      const more = page.hasMore;
      const segment = more ? (first ? 'start' : 'more') : 'end';
      const head: Record<string, unknown> = { op: 'image', id: sub.id, clk, segment };
      if (resync) head.resync = true;
      const bytes = rowsMessage(sub.request.format, head, sub.request.format === 'json' ? rows : rowsMsgpack(rows));
      // Only the last segment is a resume point: a client cut off mid-image starts over.
      if (!this.deliver(sub.client, { op: 'image', resumeClk: more ? null : clk, bytes, binary: sub.request.format === 'msgpack' }, true)) return;
      if (!more) break;
      afterId = page.lastId;
      first = false;
    }
    sub.point = point;
    sub.clk = clk;
    sub.dirty = false;
    sub.lastFlushAt = this.wallNow();
  }

  /**
   * Sends every row of the subscription changed after its point, latest state each, in
   * change order, as deltas of at most SEGMENT_ROWS rows; each one's clk is the
   * sequence of its last row (the last one's is the board's), so a client cut off
   * between them resumes where it stopped.
   */
  private catchUp(sub: Subscription): void {
    const slots = this.changedSince(sub.group, sub.point);
    const s = this.engine.store;
    const now = this.point();
    sub.dirty = false;
    sub.lastFlushAt = this.wallNow();
    if (slots.length === 0) {
      if (sub.clk === '' || now.seq === sub.point.seq) return;
      // Nothing of this subscription changed: an empty delta still moves the client on.
      const clk = this.tokens.issue(now);
      this.sendRows(sub, 'delta', { op: 'delta', id: sub.id, clk, prev: sub.clk }, sub.request.format === 'json' ? Buffer.alloc(0) : rowsMsgpack(Buffer.alloc(0)), clk, now);
      return;
    }
    for (let start = 0; start < slots.length; start += SEGMENT_ROWS) {
      const end = Math.min(slots.length, start + SEGMENT_ROWS);
      const last = end === slots.length;
      const lastSlot = slots[end - 1]!;
      const point = last ? now : { seq: s.seq[lastSlot]!, time: Math.floor(s.updated[lastSlot]!) };
      const clk = this.tokens.issue(point);
      const rendered = new RenderedRows(this.engine, slots.subarray(start, end), end - start).get(sub.request.format, sub.formatCode);
      if (!this.sendRows(sub, 'delta', { op: 'delta', id: sub.id, clk, prev: sub.clk }, rendered, clk, point)) return;
    }
  }

  /** Rows of the group's filter (tombstones included) whose last change is after `from`, in change order. */
  private changedSince(group: Group, from: ClockPoint): Int32Array {
    const s = this.engine.store;
    const f = group.compiled.filter;
    const deltaFilter = { leagues: f.leagues, sportsbooks: f.sportsbooks, markets: f.markets };
    const found: number[] = [];
    let afterId: string | null = null;
    for (;;) {
      const page = this.engine.delta(deltaFilter, from.time, afterId, 4096);
      for (let i = 0; i < page.count; i++) {
        const slot = page.slots[i]!;
        const state = s.state[slot];
        if ((state === SLOT_LIVE || state === SLOT_TOMBSTONE) && s.seq[slot]! > from.seq && group.compiled.matches(slot)) found.push(slot);
      }
      if (!page.hasMore) break;
      afterId = page.lastId;
    }
    return Int32Array.from(found).sort((a, b) => s.seq[a]! - s.seq[b]!);
  }

  /** One rows message; false when the client was disconnected. */
  private sendRows(sub: Subscription, op: ServerOp, head: Record<string, unknown>, rows: Buffer, clk: string, point: ClockPoint): boolean {
    const bytes = rowsMessage(sub.request.format, head, rows);
    if (!this.deliver(sub.client, { op, resumeClk: clk, bytes, binary: sub.request.format === 'msgpack' }, false)) return false;
    sub.point = point;
    sub.clk = clk;
    return true;
  }

  /**
   * Hands a message to the client's socket. A message the transport would drop, or a
   * queue past the cap after a delta, disconnects the client (slow_consumer): a gap is
   * never left silently. An image may pass the cap (it is sent whole, once).
   */
  private deliver(client: StreamClient, message: OutgoingMessage, image: boolean): boolean {
    if (client.closed) return false;
    const result = this.send(client, message);
    if (result === 'dropped' || (!image && client.sink.bufferedAmount() > this.bufferCap)) {
      this.dropSlow(client);
      return false;
    }
    return true;
  }

  private send(client: StreamClient, message: OutgoingMessage): SinkResult {
    if (client.closed) return 'dropped';
    const result = client.sink.send(message);
    if (result !== 'dropped') {
      this.counters.messages++;
      this.counters.bytes += message.bytes.length;
      const format = message.binary ? 1 : 0;
      this.sentMessages[format]!++;
      this.sentBytes[format]! += message.bytes.length;
      client.lastSentAt = this.wallNow();
    }
    if (result === 'backpressure') client.backedUp = true;
    return result;
  }

  private dropSlow(client: StreamClient): void {
    if (client.closed) return;
    this.counters.slowConsumerDrops++;
    try {
      this.onSlowConsumer?.(client.sink.bufferedAmount(), client.subs.size);
    } catch {
      // the log's failure must not leave the client half dropped
    }
    const detail = `the connection queued more than ${this.bufferCap} bytes it did not read: disconnected; resume with the clk of the last message applied`;
    const message = plainMessage(client.format, { op: 'status', code: 'slow_consumer', detail });
    client.sink.send({ op: 'status', resumeClk: null, bytes: message, binary: client.format === 'msgpack' });
    this.disconnect(client);
    client.sink.close('slow_consumer');
  }

  private leaveGroup(sub: Subscription): void {
    const group = sub.group;
    group.subs.delete(sub);
    if (group.subs.size === 0) this.groups.delete(group.key);
  }

  /** Conflation intervals that are up, backed-up clients' slow flushes, and heartbeats. */
  private tick(): void {
    const now = this.wallNow();
    for (const client of this.clients) {
      if (client.closed) continue;
      for (const sub of client.subs.values()) {
        if (!sub.dirty) continue;
        const interval = client.backedUp ? Math.max(BACKED_UP_INTERVAL_MS, sub.request.conflateMs) : sub.request.conflateMs;
        if (now - sub.lastFlushAt >= interval) this.catchUp(sub);
        if (client.closed) break;
      }
      if (client.closed || client.backedUp || client.subs.size === 0) continue;
      if (now - client.lastSentAt >= client.heartbeatMs()) this.sendHeartbeat(client);
    }
  }
}

/** The engine's odds formats, for validation messages. */
export const STREAM_ODDS_FORMATS: readonly OddsFormat[] = ODDS_FORMATS;

function grownI32(array: Int32Array, needed: number): Int32Array {
  const out = new Int32Array(Math.max(needed, array.length * 2));
  out.set(array);
  return out;
}

function grownU32(array: Uint32Array, needed: number): Uint32Array {
  const out = new Uint32Array(Math.max(needed, array.length * 2));
  out.set(array);
  return out;
}
