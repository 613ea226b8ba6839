// The push stream's core: subscriptions to filtered views of the board, fed from the
// engine's change notifications. Transport-free: a client is a StreamSink (the
// WebSocket route and the SSE route each adapt their connection to it).
//
// What a subscription receives: an image (its rows as /odds serves them, in segments of
// at most 1,000 rows, each segment built in its own turn of the event loop so other
// subscribers' deltas pass between them; all carry the clk of the image's start), then
// deltas, each naming the board sequence it brings the client to (clk) and the one
// before it (prev), so a client can check that the chain is unbroken. A resume (a clk
// this board issued, still within what the board can answer) gets only the rows changed
// after it; anything else gets a fresh image marked resync.
//
// Fan-out, at the end of every apply (same tick, no timer): subscriptions with the same
// filter share one group (one compiled matcher); each changed row is offered only to
// the groups filed under its event, league or sportsbook (groupIndex.ts), so a batch
// costs its rows times the groups they may match; each group renders its rows once per
// wire format and odds format, and each distinct message (envelope included: id, clk,
// prev) is built once and handed as the same bytes to every subscription it is for. A
// client with several subscriptions gets the batch's deltas for all of them at the end,
// in one socket write (the sink's cork), instead of one write per subscription.
//
// Conflation keeps nothing per row: a conflating subscription only remembers the
// point its client is at (the clk of its last message) and that something changed; when
// its interval is up, one delta query (rows of its filter changed after that point, the
// delta feed's own query) yields each changed row's latest state. So memory per
// subscription is constant whatever the rate. A client whose socket pushes back is
// conflated the same way (at most one delta a second) until it drains; if its queued
// bytes still pass the cap, it is told slow_consumer and disconnected. Nothing is ever
// silently skipped: a message the transport would drop ends the connection instead.
import type { ArchivedTombstones, ReplaySource } from '../archivedTombstones.ts';
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine.ts';
import { ODDS_FORMATS, type OddsFormat } from '../rowJson.ts';
import { SLOT_LIVE, SLOT_TOMBSTONE } from '../oddsStore.ts';
import type { ClockPoint, ClockTokens } from './streamClock.ts';
import { GroupIndex } from './groupIndex.ts';
import { CompiledFilter, filterKey, oddsFilterOf } from './streamFilter.ts';
import { jsonRowsHead, plainMessage, rowsMessage, rowsMsgpack, type OutgoingMessage, type ServerOp, type WireFormat } from './streamMessages.ts';
import { Group } from './group.ts';
import { GroupDeltaRows } from './groupDeltaRows.ts';
import { StreamClient, type ClientHub } from './streamClient.ts';
import type { SinkResult, StatusCode, StreamSink, SubscribeRequest } from './streamSink.ts';
import { Subscription, type ImageInProgress } from './subscription.ts';

type Sub = Subscription<StreamClient>;
type HubGroup = Group<Sub>;

/** Rows per image segment and per delta message of a catch-up. */
export const SEGMENT_ROWS = 1000;
/** How often a pushed-back client gets its conflated delta. */
const BACKED_UP_INTERVAL_MS = 1000;

export interface StreamHubOptions {
  tokens: ClockTokens;
  /** Queued bytes past which a client is disconnected as a slow consumer. */
  bufferCapBytes: number;
  /** Timer resolution for heartbeats and conflation (default 50 ms). */
  tickMs?: number;
  /** Wall-clock milliseconds for heartbeats and conflation intervals (the board clock may be frozen). */
  wallNow?: () => number;
  /**
   * How long a resume whose clk is ahead of this board (issued by a node further along
   * the same history: the writer, when this is a replica that lags) waits for the board
   * to reach it before it is answered with a resync and an image (default 5,000 ms; 0:
   * at once).
   */
  aheadWaitMs?: number;
  /** Open subscriptions a connection may hold; a subscribe past it is answered with status too_many_subscriptions (default 100). */
  maxSubscriptions?: number;
  /**
   * The replay window over the tick archive (REPLAY_WINDOW_HOURS): a clk past the delta
   * feed's horizon but inside it resumes with the rows removed since, from the archive.
   * Absent: such a clk gets a resync, as any clk past the horizon.
   */
  replay?: ReplaySource | null;
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
  /** Subscribes answered too_many_subscriptions. */
  refusedSubscriptions: number;
  /** The most bytes one connected client has queued and not yet written to its socket, now. */
  queuedBytesMax: number;
}

export class StreamHub implements ChangeListener, ClientHub {
  readonly wallNow: () => number;
  private readonly tokens: ClockTokens;
  private readonly bufferCap: number;
  private readonly groups = new Map<string, HubGroup>();
  private readonly index: GroupIndex<HubGroup>;
  /** Numbers the fan-out passes (a group's matched rows belong to the pass it records). */
  private pass = 0;
  private readonly touched: HubGroup[] = [];
  /** Clients with deltas waiting in corkedSubs, sent once the batch's groups are done. */
  private readonly corking: StreamClient[] = [];
  /** One group's delta messages of the pass, by sharing key (see Subscription.sharingPrefix). */
  private readonly shared = new Map<string, OutgoingMessage>();
  /** The fan-out's rendered rows, reset for each group (fanOut is never re-entered: nothing it calls applies changes). */
  private readonly rendered: GroupDeltaRows;
  /**
   * Subscriptions holding back changes (dirty: conflating, or their client pushed
   * back): the timer visits only these, not every subscription.
   */
  private readonly behind = new Set<Sub>();
  /** Resumes waiting for the board to reach their clk (see aheadWaitMs). */
  private readonly awaiting = new Set<Sub>();
  private readonly replay: ReplaySource | null;
  private readonly aheadWaitMs: number;
  private readonly maxSubscriptions: number;
  private readonly clients = new Set<StreamClient>();
  private readonly timer: NodeJS.Timeout;
  /** Rows changed in the batch being applied, each once (stamp = batch number). */
  private pending: Int32Array = new Int32Array(1024);
  private pendingCount = 0;
  private stamps: Uint32Array = new Uint32Array(1024);
  private batch = 1;
  private readonly counters = { slowConsumerDrops: 0, resyncs: 0, resumes: 0, messages: 0, bytes: 0, refusedSubscriptions: 0 };
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
    this.index = new GroupIndex(engine.store);
    this.rendered = new GroupDeltaRows(engine, new Int32Array(0), 0);
    this.bufferCap = options.bufferCapBytes;
    this.wallNow = options.wallNow ?? (() => performance.now());
    this.aheadWaitMs = options.aheadWaitMs ?? 5000;
    this.maxSubscriptions = options.maxSubscriptions ?? 100;
    this.replay = options.replay ?? null;
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
    let backedUpClients = 0;
    let queuedBytesMax = 0;
    for (const client of this.clients) {
      subscriptions += client.subs.size;
      if (client.backedUp) {
        backedUpClients++;
        const queued = client.sink.bufferedAmount();
        if (queued > queuedBytesMax) queuedBytesMax = queued;
      }
    }
    return { clients: this.clients.size, subscriptions, groups: this.groups.size, conflating: this.behind.size, backedUpClients, queuedBytesMax, ...this.counters };
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
    if (count === 0 || this.groups.size === 0) {
      if (this.awaiting.size > 0) this.resumeAwaiting();
      return;
    }
    const s = this.engine.store;
    // Change order: a row changed twice in the batch sits at its last change.
    const slots = this.pending.subarray(0, count).sort((a, b) => s.seq[a]! - s.seq[b]!);
    const point = this.point();
    const clk = this.tokens.issue(point);
    // Each changed row, in change order, goes to the groups that follow it (the index
    // tests only the groups filed under its event, league or sportsbook).
    const pass = ++this.pass;
    const touched = this.touched;
    touched.length = 0;
    for (let i = 0; i < count; i++) this.index.collect(slots[i]!, pass, touched);
    // One reading of the clock for the batch: a client's last-sent time is what heartbeats need, not a time per frame.
    const at = this.wallNow();
    for (let i = 0; i < touched.length; i++) this.fanOut(touched[i]!, clk, point, at);
    touched.length = 0;
    const corking = this.corking;
    for (let i = 0; i < corking.length; i++) this.sendCorked(corking[i]!, clk, point, at);
    corking.length = 0;
    // after the fan-out (which skipped them): their catch-up includes this batch
    if (this.awaiting.size > 0) this.resumeAwaiting();
  }

  /**
   * The batch's deltas of a client with several subscriptions, in one socket write.
   * Inside the cork a small send is only copied, so the socket's push-back may show
   * only after it: the client is then backed up as after a send that reported it (and
   * past the cap, dropped), and its drained() follows as usual.
   */
  private sendCorked(client: StreamClient, clk: string, point: ClockPoint, at: number): void {
    const subs = client.corkedSubs;
    const messages = client.corkedMessages;
    const sends = () => {
      for (let i = 0; i < subs.length; i++) {
        const sub = subs[i]!;
        if (client.closed) return;
        if (client.backedUp) {
          this.heldBack[1]!++;
          sub.dirty = true;
          this.behind.add(sub);
          continue;
        }
        if (!this.deliver(client, messages[i]!, false, at)) return;
        sub.moveTo(point, clk);
      }
    };
    if (client.sink.cork === undefined || client.closed) sends();
    else client.sink.cork(sends);
    subs.length = 0;
    messages.length = 0;
    if (client.closed || client.backedUp) return;
    const queued = client.sink.bufferedAmount();
    if (queued === 0) return;
    client.backedUp = true;
    if (queued > this.bufferCap) this.dropSlow(client);
  }

  /**
   * One group's delta of the batch: its rows rendered once per wire and odds format,
   * each distinct message built once and handed to every subscription it is for. A
   * subscription that is conflating, or whose client pushes back, only notes that it
   * has something to catch up on.
   */
  private fanOut(group: HubGroup, clk: string, point: ClockPoint, at: number): void {
    const rendered = this.rendered;
    rendered.reset(group.matched, group.matchedCount);
    const shared = this.shared;
    shared.clear();
    // The previous subscription's message and what it was for: subscriptions in step
    // usually follow each other, so most find their message here without a key.
    let lastMessage: OutgoingMessage | null = null;
    let lastPrefix = '';
    let lastPrev = '';
    let lastId = '';
    for (const sub of group.subs) {
      if (sub.imaging !== null || sub.awaiting !== null) {
        // sent after its image, from the image's clk (finishImage), or once the board reaches its clk
        sub.dirty = true;
        continue;
      }
      if (sub.conflates || sub.client.backedUp || sub.dirty) {
        this.heldBack[sub.client.backedUp ? 1 : 0]!++;
        sub.dirty = true;
        this.behind.add(sub);
        continue;
      }
      let message: OutgoingMessage | null = lastMessage;
      if (message === null || sub.clk !== lastPrev || sub.sharingPrefix !== lastPrefix || sub.id !== lastId) {
        const key = `${sub.sharingPrefix}${sub.clk} ${sub.id}`;
        message = shared.get(key) ?? null;
        if (message === null) {
          const format = sub.request.format;
          const head = { op: 'delta', id: sub.id, clk, prev: sub.clk };
          const bytes = format === 'json' ? rendered.jsonMessage(jsonRowsHead(head), sub.formatCode) : rowsMessage(format, head, rendered.get(format, sub.formatCode));
          message = { op: 'delta', resumeClk: clk, bytes, binary: format === 'msgpack' };
          shared.set(key, message);
        }
        lastMessage = message;
        lastPrefix = sub.sharingPrefix;
        lastPrev = sub.clk;
        lastId = sub.id;
      }
      const client = sub.client;
      if (client.subscriptionCount > 1) {
        if (client.corkedSubs.length === 0) this.corking.push(client);
        client.corkedSubs.push(sub);
        client.corkedMessages.push(message);
        continue;
      }
      if (!this.deliver(client, message, false, at)) continue;
      sub.moveTo(point, clk);
    }
    shared.clear();
  }

  // ---- subscriptions ---------------------------------------------------------------

  subscribe(client: StreamClient, request: SubscribeRequest): void {
    if (client.closed) return;
    if (client.subs.has(request.id)) {
      this.sendStatus(client, 'invalid_subscription', `a subscription with id ${request.id} is already open on this connection; unsubscribe it first`, request.id, 'id');
      return;
    }
    // a client that leaves more than the cap unread asks for nothing more: it is dropped, as a delta past the cap would drop it
    if (client.backedUp && client.sink.bufferedAmount() > this.bufferCap) {
      this.dropSlow(client);
      return;
    }
    if (client.subs.size >= this.maxSubscriptions) {
      this.counters.refusedSubscriptions++;
      this.sendStatus(client, 'too_many_subscriptions', `a connection holds at most ${this.maxSubscriptions} subscriptions (STREAM_MAX_SUBSCRIPTIONS); unsubscribe one first`, request.id);
      return;
    }
    client.format = request.format;
    const key = filterKey(request.filter);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = new Group(key, new CompiledFilter(request.filter, this.engine.store));
      this.groups.set(key, group);
      this.index.add(group);
    }
    const sub = new Subscription(request.id, client, group, request);
    group.subs.add(sub);
    client.subs.set(request.id, sub);
    client.subscriptionCount = client.subs.size;
    if (request.heartbeatMs < client.heartbeatEvery) client.heartbeatEvery = request.heartbeatMs;
    sub.lastFlushAt = this.wallNow();

    if (request.clk !== null) {
      const ahead = this.aheadWaitMs > 0 ? this.tokens.read(request.clk) : null;
      if (ahead !== null && ahead.seq > this.engine.seq) {
        // a node further along this history issued it: wait (bounded) for this board to get there
        sub.awaiting = { point: ahead, clk: request.clk, until: sub.lastFlushAt + this.aheadWaitMs };
        this.awaiting.add(sub);
        return;
      }
      const from = this.resumable(request.clk);
      if (from !== null) {
        this.counters.resumes++;
        sub.moveTo(from, request.clk);
        this.catchUp(sub);
        return;
      }
      const old = this.replayable(request.clk);
      if (old !== null) {
        this.resumeFromArchive(sub, old, request.clk);
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
    client.subscriptionCount = client.subs.size;
    this.leaveGroup(sub);
    return true;
  }

  disconnect(client: StreamClient): void {
    if (client.closed) return;
    client.closed = true;
    for (const sub of client.subs.values()) this.leaveGroup(sub);
    client.subs.clear();
    client.subscriptionCount = 0;
    this.clients.delete(client);
  }

  drained(client: StreamClient): void {
    if (client.closed || !client.backedUp) return;
    if (client.sink.bufferedAmount() > 0) return;
    client.backedUp = false;
    const now = this.wallNow();
    for (const sub of client.subs.values()) {
      const image = sub.imaging;
      if (image !== null && image.paused) {
        image.paused = false;
        this.imageSegment(sub, image);
        if (client.closed || client.backedUp) return;
        continue;
      }
      if (sub.dirty && sub.imaging === null && (sub.request.conflateMs === 0 || now - sub.lastFlushAt >= sub.request.conflateMs)) this.catchUp(sub);
      if (client.closed || client.backedUp) return;
    }
  }

  sendHeartbeat(client: StreamClient): void {
    // through the cap like any message: a client asking for heartbeats it never reads is dropped
    this.deliver(client, { op: 'heartbeat', resumeClk: null, bytes: plainMessage(client.format, { op: 'heartbeat', clk: this.currentClk() }), binary: client.format === 'msgpack' }, false);
  }

  sendStatus(client: StreamClient, code: StatusCode, detail: string, id?: string, param?: string | null): void {
    const message: Record<string, unknown> = { op: 'status' };
    if (id !== undefined) message.id = id;
    message.code = code;
    message.detail = detail;
    if (param !== undefined && param !== null) message.param = param;
    this.deliver(client, { op: 'status', resumeClk: null, bytes: plainMessage(client.format, message), binary: client.format === 'msgpack' }, false);
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

  /** A point past the delta feed's horizon that the replay window covers, or null. */
  private replayable(clk: string): ClockPoint | null {
    if (this.replay === null) return null;
    const point = this.tokens.read(clk);
    if (point === null || point.seq > this.engine.seq) return null;
    if (point.time >= this.engine.deltaHorizon() || !this.replay.covers(point.time)) return null;
    return point;
  }

  /**
   * A resume from the archive: the subscription waits (the fan-out marks it dirty, as
   * an awaiting one) while the archive is asked for the rows removed since `point`,
   * then catches up with them and the board's rows; a null answer (the archive cannot
   * vouch for it) gets a resync and an image, as without an archive.
   */
  private resumeFromArchive(sub: Sub, point: ClockPoint, clk: string): void {
    const waiting = { point, clk, until: Infinity };
    sub.awaiting = waiting;
    const settle = (archived: ArchivedTombstones | null): void => {
      // left (unsubscribed, disconnected) meanwhile
      if (sub.awaiting !== waiting || sub.client.closed) return;
      sub.awaiting = null;
      if (archived === null) {
        this.counters.resyncs++;
        this.sendStatus(sub.client, 'resync', 'the clk cannot be resumed from (the tick archive cannot vouch for the changes since): a fresh image follows', sub.id);
        if (!sub.client.closed) this.sendImage(sub, true);
        return;
      }
      this.counters.resumes++;
      sub.moveTo(point, clk);
      this.catchUpWithArchived(sub, archived);
    };
    this.replay!.tombstonesSince(point.time).then(settle, () => settle(null));
  }

  /**
   * A catch-up that also brings the archived rows removed since the subscription's
   * point that the board no longer holds: every row in the order of its last change
   * (an archived removal before a board row of the same time), in segments whose clk
   * each resumes after what was sent.
   */
  private catchUpWithArchived(sub: Sub, archived: ArchivedTombstones): void {
    const from = sub.point();
    const matcher = archived.matcher(sub.group.compiled.filter);
    const extra: number[] = [];
    for (const slot of archived.slots) {
      if (archived.updatedOf(slot) >= from.time && matcher.matches(slot) && this.engine.slotOf(archived.idOf(slot)) < 0) extra.push(slot);
    }
    if (extra.length === 0) return this.catchUp(sub);
    extra.sort((a, b) => archived.updatedOf(a) - archived.updatedOf(b));
    const board = this.changedSince(sub.group, from);
    const s = this.engine.store;
    const now = this.point();
    const code = sub.formatCode;
    sub.dirty = false;
    this.behind.delete(sub);
    sub.lastFlushAt = this.wallNow();
    let b = 0;
    let e = 0;
    let lastSeq = from.seq;
    while (b < board.length || e < extra.length) {
      const parts: Buffer[] = [];
      let point: ClockPoint = now;
      while (parts.length < SEGMENT_ROWS && (b < board.length || e < extra.length)) {
        if (e < extra.length && (b === board.length || archived.updatedOf(extra[e]!) <= s.updated[board[b]!]!)) {
          const slot = extra[e++]!;
          parts.push(Buffer.from(archived.json(slot, code)));
          point = { seq: lastSeq, time: Math.floor(archived.updatedOf(slot)) };
        } else {
          const slot = board[b++]!;
          parts.push(this.engine.fragments.join(Int32Array.of(slot), 1, code));
          lastSeq = s.seq[slot]!;
          point = { seq: lastSeq, time: Math.floor(s.updated[slot]!) };
        }
      }
      if (b === board.length && e === extra.length) point = now;
      const json = Buffer.from(parts.map((part) => part.toString()).join(','));
      const rows = sub.request.format === 'json' ? json : rowsMsgpack(json);
      const clk = this.tokens.issue(point);
      if (!this.sendRows(sub, 'delta', { op: 'delta', id: sub.id, clk, prev: sub.clk }, rows, clk, point)) return;
    }
  }

  /**
   * Resumes the waiting subscriptions the board has reached (with the changes after
   * their clk, as any resume); after `now` passes their wait, a resync and an image.
   */
  private resumeAwaiting(now = -Infinity): void {
    for (const sub of this.awaiting) {
      const waiting = sub.awaiting!;
      const reached = waiting.point.seq <= this.engine.seq;
      if (!reached && now < waiting.until) continue;
      this.awaiting.delete(sub);
      sub.awaiting = null;
      if (sub.client.closed) continue;
      const from = reached ? this.resumable(waiting.clk) : null;
      if (from !== null) {
        this.counters.resumes++;
        sub.moveTo(from, waiting.clk);
        this.catchUp(sub);
        continue;
      }
      const old = reached ? this.replayable(waiting.clk) : null;
      if (old !== null) {
        this.resumeFromArchive(sub, old, waiting.clk);
        continue;
      }
      this.counters.resyncs++;
      this.sendStatus(sub.client, 'resync', reached ? 'the clk cannot be resumed from (too old for the changes this service still holds): a fresh image follows' : `the clk is ahead of this service's board, which did not reach it within ${this.aheadWaitMs} ms: a fresh image follows`, sub.id);
      if (sub.client.closed) continue;
      this.sendImage(sub, true);
    }
  }

  /**
   * The subscription's rows as /odds serves them, in segments (see ImageInProgress): the
   * first one now, each further one in a later turn of the event loop.
   */
  private sendImage(sub: Sub, resync: boolean): void {
    const point = this.point();
    sub.dirty = false;
    this.behind.delete(sub);
    sub.imaging = { point, clk: this.tokens.issue(point), resync, filter: oddsFilterOf(sub.group.compiled.filter), afterId: null, first: true, next: null, paused: false };
    this.imageSegment(sub, sub.imaging);
  }

  /** Sends the image's next segment; schedules the one after it, or finishes the image. */
  private imageSegment(sub: Sub, image: ImageInProgress): void {
    image.next = null;
    if (sub.imaging !== image || sub.client.closed) return;
    if (sub.client.backedUp) {
      // the socket holds unsent bytes: the next segment waits for drained() (memory per connection stays near the cap)
      image.paused = true;
      return;
    }
    const odds = this.engine.odds;
    const page = odds.page(image.filter, image.afterId, SEGMENT_ROWS);
    const rows = odds.render(page, sub.request.oddsFormat);
    const more = page.hasMore;
    const head: Record<string, unknown> = { op: 'image', id: sub.id, clk: image.clk, segment: more ? (image.first ? 'start' : 'more') : 'end' };
    if (image.resync) head.resync = true;
    const format = sub.request.format;
    const bytes = rowsMessage(format, head, format === 'json' ? rows : rowsMsgpack(rows));
    // Only the last segment is a resume point: a client cut off mid-image starts over.
    if (!this.deliver(sub.client, { op: 'image', resumeClk: more ? null : image.clk, bytes, binary: format === 'msgpack' }, true)) {
      sub.imaging = null;
      return;
    }
    if (more) {
      image.afterId = page.lastId;
      image.first = false;
      if (sub.client.backedUp) image.paused = true;
      else image.next = setImmediate(() => this.imageSegment(sub, image));
      return;
    }
    this.finishImage(sub, image);
  }

  /** The image is out: the subscription stands at its clk, and what changed meanwhile follows by the usual rules. */
  private finishImage(sub: Sub, image: ImageInProgress): void {
    sub.imaging = null;
    sub.moveTo(image.point, image.clk);
    sub.lastFlushAt = this.wallNow();
    if (!sub.dirty) return;
    if (sub.request.conflateMs === 0 && !sub.client.backedUp) this.catchUp(sub);
    else this.behind.add(sub);
  }

  /**
   * Sends every row of the subscription changed after its point, latest state each, in
   * change order, as deltas of at most SEGMENT_ROWS rows; each one's clk is the
   * sequence of its last row (the last one's is the board's), so a client cut off
   * between them resumes where it stopped.
   */
  private catchUp(sub: Sub): void {
    const slots = this.changedSince(sub.group, sub.point());
    const s = this.engine.store;
    const now = this.point();
    sub.dirty = false;
    this.behind.delete(sub);
    sub.lastFlushAt = this.wallNow();
    if (slots.length === 0) {
      if (sub.clk === '' || now.seq === sub.seq) return;
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
      const rendered = new GroupDeltaRows(this.engine, slots.subarray(start, end), end - start).get(sub.request.format, sub.formatCode);
      if (!this.sendRows(sub, 'delta', { op: 'delta', id: sub.id, clk, prev: sub.clk }, rendered, clk, point)) return;
    }
  }

  /** Rows of the group's filter (tombstones included) whose last change is after `from`, in change order. */
  private changedSince(group: HubGroup, from: ClockPoint): Int32Array {
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
  private sendRows(sub: Sub, op: ServerOp, head: Record<string, unknown>, rows: Buffer, clk: string, point: ClockPoint): boolean {
    const bytes = rowsMessage(sub.request.format, head, rows);
    if (!this.deliver(sub.client, { op, resumeClk: clk, bytes, binary: sub.request.format === 'msgpack' }, false)) return false;
    sub.moveTo(point, clk);
    return true;
  }

  /**
   * Hands a message to the client's socket. A message the transport would drop, or a
   * queue past the cap, disconnects the client (slow_consumer): a gap is never left
   * silently. An image segment counts against the cap like any message; it is sent only
   * while the socket has nothing queued (imageSegment), so it may take the queue past
   * the cap by at most its own length.
   */
  private deliver(client: StreamClient, message: OutgoingMessage, image: boolean, at = this.wallNow()): boolean {
    if (client.closed) return false;
    const result = this.send(client, message, at);
    // after 'sent' the queue is below any cap (see SinkResult): the cap is only read after backpressure
    if (result === 'dropped' || (result === 'backpressure' && client.sink.bufferedAmount() > this.bufferCap + (image ? message.bytes.length : 0))) {
      this.dropSlow(client);
      return false;
    }
    return true;
  }

  private send(client: StreamClient, message: OutgoingMessage, at = this.wallNow()): SinkResult {
    if (client.closed) return 'dropped';
    const result = client.sink.send(message);
    if (result !== 'dropped') {
      this.counters.messages++;
      this.counters.bytes += message.bytes.length;
      const format = message.binary ? 1 : 0;
      this.sentMessages[format]!++;
      this.sentBytes[format]! += message.bytes.length;
      client.lastSentAt = at;
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

  private leaveGroup(sub: Sub): void {
    const group = sub.group;
    group.subs.delete(sub);
    this.behind.delete(sub);
    if (sub.awaiting !== null) {
      this.awaiting.delete(sub);
      sub.awaiting = null;
    }
    if (sub.imaging !== null) {
      if (sub.imaging.next !== null) clearImmediate(sub.imaging.next);
      sub.imaging = null;
    }
    sub.client.heartbeatEvery = sub.client.heartbeatMs();
    if (group.subs.size > 0 || this.groups.get(group.key) !== group) return;
    this.groups.delete(group.key);
    this.index.remove(group);
  }

  /** Conflation intervals that are up, backed-up clients' slow flushes, and heartbeats. */
  private tick(): void {
    const now = this.wallNow();
    if (this.awaiting.size > 0) this.resumeAwaiting(now);
    for (const sub of this.behind) {
      const client = sub.client;
      if (client.closed) {
        this.behind.delete(sub);
        continue;
      }
      if (sub.imaging !== null) continue;
      const interval = client.backedUp ? Math.max(BACKED_UP_INTERVAL_MS, sub.request.conflateMs) : sub.request.conflateMs;
      if (now - sub.lastFlushAt >= interval) this.catchUp(sub);
    }
    for (const client of this.clients) {
      if (client.closed || client.backedUp || client.subs.size === 0) continue;
      if (now - client.lastSentAt >= client.heartbeatEvery) this.sendHeartbeat(client);
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
