// The signal stream's topics: the trader screens pushed as they change, with the same
// filters as their routes. Transport-free, like the stream hub: a subscriber is a
// TopicSink (the SSE route adapts its connection to it, the WebSocket route each of a
// connection's subscriptions). Each message is a SignalMessage: serialised once per
// wire format for every subscriber it goes to.
//
//   steam        each move as the sharp tick that made it is applied (one message per
//                move, serialized once and shared by every subscriber it matches)
//   fair_line, best_price, ev
//                at most once per interval (default 1 s; flush() at once): the market
//                groups whose records for the subscription changed since it was last
//                pushed them (`groups`, their ids) and their current records passing
//                the filter (`records`); a client replaces what it holds for those
//                groups, so a record that left is a group listed without it
//   middle       the same: `groups` whose family's middles changed, `records` the
//                middles of their families (the groups differing only in their line)
//
// What changed: a push starts from the groups re-read since the last one (a tick marks
// its group; the push settles the marks, in slices) and, for the fair line and +EV, the
// groups whose fair line lost a sharp book to the staleness window since it was
// evaluated (an expiry heap: that changes a line without a tick). For each of those
// passing a subscription's filter it takes a fingerprint of the numbers the group's
// records are built from (ScreenBook.*Mark: no string built) and lists the group only
// when that differs from the fingerprint it last pushed the subscription (a Float64Array
// per subscription, by group). A tick on a price that is nobody's best changes no
// best_price record; one on a retail book changes no fair line. A subscription's first
// push lists every group of the push passing its filter (it has been pushed nothing).
// The fair line's and +EV's quote ages are not compared (they move with the clock): a
// pushed record's ages are those at the push that listed it.
//
// Subscriptions asking the same (the request as text) from the same push on share one
// Channel: its fingerprints (GroupMarks: by group index, or hashed for a filtered one),
// and each message serialised once. One asking the same as a channel already pushed to
// starts a channel of its own (its full image), merged back into the other at the end
// of a push once both hold the same fingerprints.
//
// A push of many groups (the first after subscribing may hold every group the load
// marked; a busy board marks thousands a second) is cut into messages of at most
// MESSAGE_GROUPS listed groups, each self-contained (its groups and their records), sent
// a slice of SLICE_MS at a time, one channel's next message in turn, with the event loop
// free in between: a steam move, an ingest batch or a read waits for at most one slice,
// not for the whole push. Settling the marked groups at its start is sliced the same way.
// When a message is built, its records are the groups' as the books hold them then (a
// tick in the meantime marks its group for the next push).
//
// While no group topic has a subscriber nothing is settled here: the books keep
// their marks until the next read. A market whose last row leaves the board is not
// announced on the group topics (its group is gone); the odds stream carries the removal.
import type { EngineSignals } from '../signals/engineSignals.ts';
import { devigMethodCode } from '../signals/devig.ts';
import { ExpiryHeap } from '../signals/expiryHeap.ts';
import { newFairValue } from '../signals/screenBook.ts';
import type {
  BestPriceQuery, FairLineQuery, MiddleQuery, PositiveEvQuery, SteamQuery, SteamRecord,
} from '../signals/screenRecords.ts';
import { matchesSteam } from '../signals/steamDetector.ts';
import { grown } from '../columns.ts';
import { GroupMarks } from './groupMarks.ts';
import { SignalMessage } from './signalMessage.ts';

export const SIGNAL_TOPICS = ['steam', 'fair_line', 'best_price', 'ev', 'middle'] as const;
/** Most groups one group-topic message lists: a push of more is cut into several messages. */
export const MESSAGE_GROUPS = 64;
/** A push is built in slices of about this many ms of the event loop, with other work served between them. */
const SLICE_MS = 2;
export type SignalTopic = (typeof SIGNAL_TOPICS)[number];

export type TopicQuery =
  | { topic: 'steam'; query: SteamQuery }
  | { topic: 'fair_line'; query: FairLineQuery }
  | { topic: 'best_price'; query: BestPriceQuery }
  | { topic: 'ev'; query: PositiveEvQuery }
  | { topic: 'middle'; query: MiddleQuery };

export interface TopicSink {
  /**
   * One message: `bytes` its JSON (message.json), `message` the same in every wire
   * format. false when the client is too far behind (the sink then ends the connection).
   */
  send(topic: SignalTopic, bytes: Buffer, message: SignalMessage): boolean;
}

/** Most groups one message looks at: a message listing few of them still holds the event loop briefly. */
const MESSAGE_SCAN = 1024;

type GroupTopicQuery = Exclude<TopicQuery, { topic: 'steam' }>;

interface Subscription {
  request: TopicQuery;
  sink: TopicSink;
  /** The request as text: subscriptions asking the same share each message's bytes. */
  key: string;
  /** Group topics: the channel it is pushed through. */
  channel: Channel | null;
}

/** Group-topic subscriptions asking the same, pushed the same since their first push: what they were pushed, and each message built once. */
class Channel {
  readonly subs = new Set<Subscription>();
  /** Per group: the fingerprint of the records last pushed for it (0: none yet). */
  readonly sent: GroupMarks;
  /** Whether a push has listed for it: a subscription asking the same then needs a channel of its own. */
  started = false;
  /** Its first push lists every group passing its filter (the full image), not only the push's groups. */
  fullImage = true;
  /** Middle: each family's fingerprint as taken in this push (by the family's member list): once a family, not once a member. */
  readonly familyMarks = new Map<readonly number[], number>();
  /** +EV with a sportsbook filter: the books it allows, by source index. */
  books: Uint8Array | null = null;
  /** The devig method's code (fair_line, ev). */
  readonly method: number;

  constructor(readonly request: GroupTopicQuery, readonly key: string) {
    this.sent = new GroupMarks(request.query.leagues !== null || request.query.eventIds !== null);
    this.method = request.topic === 'fair_line' || request.topic === 'ev' ? devigMethodCode(request.query.devig) : -1;
  }
}

/** A group-topic push under way: its groups, and how far each channel got through them. */
interface Push {
  /** Re-reading the groups marked when it began, a slice at a time (ScreenBook.settleSlice); then listing. */
  settling: boolean;
  groups: number[];
  /** Per channel waiting for its next message: the index in `groups` it starts from (in turn order: served, a channel goes to the back). */
  next: Map<Channel, number>;
}

export class SignalTopics {
  private readonly subs = new Set<Subscription>();
  private channels: Channel[] = [];
  private groupSubscribers = 0;
  private readonly unsubscribeSteam: () => void;
  /** Messages sent so far (all topics). */
  messages = 0;

  private timer: NodeJS.Timeout | null = null;
  /** The push being sent in slices; null between pushes. */
  private push: Push | null = null;
  /** Groups were marked while a push was under way: the next one is scheduled when it ends. */
  private markedDuringPush = false;
  /**
   * Since the start: slices group-topic pushes were sent in and the longest one (ms);
   * groups compared (a fingerprint taken for a channel) and listed (the records changed).
   */
  readonly pushStats = { slices: 0, longestSliceMs: 0, compared: 0, listed: 0 };

  /** When each group's fair line (as last evaluated for a channel) loses a sharp book to the staleness window: it changes then without a tick. */
  private expiry = new ExpiryHeap();
  private expiresAt = new Float64Array(64);
  private candidateMark = new Uint8Array(64);
  private readonly value = newFairValue();

  /**
   * intervalMs: the group topics push at most this often (the changed groups conflate:
   * a burst of ticks on one market is one re-read and one record); 0: after every apply,
   * in one go. sliceMs: how long one slice of a push may hold the event loop (0: one
   * message per slice).
   */
  constructor(private readonly signals: EngineSignals, private readonly now: () => number, private readonly intervalMs = 1000, private readonly sliceMs = SLICE_MS) {
    this.unsubscribeSteam = signals.onSteam((move) => this.steam(move));
  }

  subscribe(request: TopicQuery, sink: TopicSink): () => void {
    const sub: Subscription = { request, sink, key: JSON.stringify(request), channel: null };
    this.subs.add(sub);
    if (request.topic !== 'steam') {
      if (this.groupSubscribers++ === 0) {
        this.signals.books.screens.collecting = true;
        this.signals.appliedListener = () => this.schedule();
      }
      let channel = this.channels.find((c) => c.key === sub.key && !c.started);
      if (channel === undefined) {
        channel = new Channel(request, sub.key);
        this.channels.push(channel);
      }
      channel.subs.add(sub);
      sub.channel = channel;
      // its full image goes out with the next push, which a quiet board would not start
      if (this.intervalMs > 0) this.schedule();
    }
    return () => this.remove(sub);
  }

  private remove(sub: Subscription): void {
    if (!this.subs.delete(sub)) return;
    const channel = sub.channel;
    if (channel === null) return;
    channel.subs.delete(sub);
    if (channel.subs.size === 0) {
      this.channels = this.channels.filter((c) => c !== channel);
      this.push?.next.delete(channel);
    }
    if (--this.groupSubscribers === 0) this.stopGroups();
  }

  /** Pushes the group topics now, in one go (the push under way included): tests, and the bench's measure of one push. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.markedDuringPush = false;
    while (this.push !== null) this.slice(Infinity);
    this.startPush();
    while (this.push !== null) this.slice(Infinity);
  }

  private schedule(): void {
    if (this.intervalMs === 0) {
      if (this.push === null) this.startPush();
      while (this.push !== null) this.slice(Infinity);
      return;
    }
    if (this.push !== null) { this.markedDuringPush = true; return; } // scheduled when it ends
    if (this.timer !== null) return;
    this.timer = setTimeout(() => { this.timer = null; this.startPush(); this.sendSlices(); }, this.intervalMs);
    this.timer.unref();
  }

  private stopGroups(): void {
    this.push = null;
    this.markedDuringPush = false;
    this.signals.appliedListener = null;
    this.signals.books.screens.collecting = false;
    this.signals.books.screens.takeCollected(this.signals);
    this.expiry = new ExpiryHeap();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Whether a group-topic push is being settled or sent (in slices). */
  get pushing(): boolean {
    return this.push !== null;
  }

  get subscriptions(): number {
    return this.subs.size;
  }

  close(): void {
    this.unsubscribeSteam();
    this.stopGroups();
    this.subs.clear();
    this.channels = [];
  }

  private steam(move: SteamRecord): void {
    let message: SignalMessage | null = null;
    for (const sub of this.subs) {
      if (sub.request.topic !== 'steam' || !matchesSteam(move, sub.request.query)) continue;
      message ??= new SignalMessage({ topic: 'steam', move });
      this.deliver(sub, message);
    }
  }

  /** Starts the next push: first the groups marked so far are settled (in slices). */
  private startPush(): void {
    if (this.groupSubscribers === 0) return;
    this.signals.books.screens.beginSettle();
    this.push = { settling: true, groups: [], next: new Map() };
  }

  /**
   * The push's groups, once settled: those re-read since the last push, and those whose
   * fair line has lost a sharp book to the staleness window since it was evaluated.
   */
  private candidates(): number[] {
    const groups = this.signals.books.screens.takeCollectedSettled();
    const now = this.now();
    if (this.expiry.peekKey() >= now) return groups;
    if (this.candidateMark.length < this.signals.groups.capacity) this.candidateMark = new Uint8Array(this.signals.groups.capacity);
    const mark = this.candidateMark;
    for (const g of groups) mark[g] = 1;
    while (this.expiry.peekKey() < now) {
      const g = this.expiry.peek();
      this.expiry.remove(g);
      if (mark[g] === 1) continue;
      mark[g] = 1;
      groups.push(g);
    }
    for (const g of groups) mark[g] = 0;
    return groups;
  }

  /** Sends the push under way a slice at a time, each on its own turn of the event loop. */
  private sendSlices(): void {
    if (this.push === null) return;
    this.slice(performance.now() + this.sliceMs);
    if (this.push !== null) { setImmediate(() => this.sendSlices()); return; }
    if (this.markedDuringPush) {
      this.markedDuringPush = false;
      if (this.groupSubscribers > 0) this.schedule();
    }
  }

  /**
   * Works on the push under way until `deadline` (performance.now()): settles its groups,
   * then sends messages, one channel's next message at a time in turn (at least one
   * step); ends the push when every channel has had all of its groups.
   */
  private slice(deadline: number): void {
    const push = this.push!;
    const started = performance.now();
    let more = true;
    if (push.settling) {
      if (this.signals.books.screens.settleSlice(this.signals, deadline)) {
        push.settling = false;
        push.groups = this.candidates();
        for (const channel of this.channels) {
          channel.started = true;
          channel.familyMarks.clear();
          if (push.groups.length > 0 || channel.fullImage) push.next.set(channel, 0);
        }
        if (push.next.size === 0) this.push = null;
      }
      more = push.settling === false && performance.now() < deadline;
    }
    if (more && this.push !== null) {
      const now = this.now();
      for (;;) {
        const first = push.next.entries().next();
        if (first.done === true) {
          this.push = null;
          this.mergeChannels();
          break;
        }
        const [channel, from] = first.value;
        push.next.delete(channel);
        const end = this.message(channel, push.groups, from, now);
        if (end < this.listLength(channel, push.groups)) {
          if (channel.subs.size > 0) push.next.set(channel, end); // to the back: the others' turn first
        } else {
          channel.fullImage = false;
        }
        if (performance.now() >= deadline) break;
      }
    }
    const ms = performance.now() - started;
    this.pushStats.slices++;
    if (ms > this.pushStats.longestSliceMs) this.pushStats.longestSliceMs = ms;
  }

  /**
   * Channels asking the same that now hold the same marks (a later subscriber's channel,
   * once its full image and the push after it caught it up) become one: one set of marks
   * and one serialisation per message again. Compared only between channels of one request.
   */
  private mergeChannels(): void {
    if (this.channels.length < 2) return;
    const byKey = new Map<string, Channel>();
    let merged = false;
    for (const channel of this.channels) {
      if (channel.fullImage) continue;
      const kept = byKey.get(channel.key);
      if (kept === undefined) {
        byKey.set(channel.key, channel);
      } else if (kept.sent.equals(channel.sent)) {
        for (const sub of channel.subs) {
          kept.subs.add(sub);
          sub.channel = kept;
        }
        channel.subs.clear();
        merged = true;
      }
    }
    if (merged) this.channels = this.channels.filter((c) => c.subs.size > 0);
  }

  /** What a channel goes through in a push: the push's groups, or for its full image every group index. */
  private listLength(channel: Channel, groups: readonly number[]): number {
    return channel.fullImage ? this.signals.groups.capacity : groups.length;
  }

  /**
   * Sends a channel's subscribers the message of its next groups of the push (of every
   * group, for its full image) whose records changed: at most MESSAGE_GROUPS listed,
   * MESSAGE_SCAN passing its filter looked at, from index `from`. Returns the index after
   * the last group it looked at. Nothing is sent when none of them changed.
   */
  private message(channel: Channel, groups: readonly number[], from: number, now: number): number {
    const screens = this.signals.books.screens;
    const query = channel.request.query;
    const full = channel.fullImage;
    const end = this.listLength(channel, groups);
    const sent = channel.sent;
    const mine: number[] = [];
    let i = from;
    let looked = 0;
    // groups the filter leaves out cost a few compares each: many more of them per message
    const scanEnd = Math.min(end, from + 16 * MESSAGE_SCAN);
    while (i < scanEnd && mine.length < MESSAGE_GROUPS && looked < MESSAGE_SCAN) {
      const g = full ? i++ : groups[i++]!;
      if (!screens.passes(g, query)) continue;
      looked++;
      // a middle's fingerprint is its family's (every member's middles are the family's)
      const family = channel.request.topic === 'middle' ? screens.familyMembers(g) : undefined;
      let mark = family === undefined ? undefined : channel.familyMarks.get(family);
      if (mark === undefined) {
        mark = this.mark(channel, g, now);
        if (family !== undefined) channel.familyMarks.set(family, mark);
      }
      this.pushStats.compared++;
      if (mark === sent.get(g)) continue;
      mine.push(g);
      // a middle message carries the group's whole family: every member is now as pushed
      if (family === undefined) sent.set(g, mark);
      else for (const m of family) sent.set(m, mark);
    }
    if (mine.length === 0) return i;
    this.pushStats.listed += mine.length;
    const message = this.build(channel.request, mine, now);
    for (const sub of [...channel.subs]) this.deliver(sub, message);
    return i;
  }

  /** The fingerprint of group g's records for a channel's request now (ScreenBook.*Mark). */
  private mark(channel: Channel, g: number, now: number): number {
    const screens = this.signals.books.screens;
    const r = channel.request;
    switch (r.topic) {
      case 'fair_line': {
        const mark = screens.fairLineMark(g, now, channel.method, this.value);
        this.noteExpiry(g, this.value.expires);
        return mark;
      }
      case 'ev': {
        if (r.query.sportsbooks !== null && (channel.books === null || channel.books.length < this.signals.sources.count)) channel.books = screens.bookMask(r.query.sportsbooks);
        const mark = screens.positiveEvMark(g, now, channel.method, r.query.minEv, r.query.sportsbooks === null ? null : channel.books, this.value);
        this.noteExpiry(g, this.value.expires);
        return mark;
      }
      case 'best_price': return screens.bestPriceMark(g, r.query.maxHold);
      case 'middle': return screens.middleMark(g, r.query);
    }
  }

  /** Group g's fair line, as just evaluated, changes at `expires` (Infinity: only with a tick): the earliest such time stays in the heap. */
  private noteExpiry(g: number, expires: number): void {
    if (expires === Infinity) return;
    if (g >= this.expiresAt.length) this.expiresAt = grown(this.expiresAt, g + 1);
    if (this.expiry.has(g) && this.expiresAt[g] <= expires) return;
    this.expiresAt[g] = expires;
    this.expiry.set(g, expires);
  }

  /** The message listing `groups` (each passing the request's filter) and their current records. */
  private build(r: GroupTopicQuery, groups: number[], now: number): SignalMessage {
    const screens = this.signals.books.screens;
    const ids = groups.map((g) => this.signals.groups.id[g]);
    let body: unknown;
    switch (r.topic) {
      case 'fair_line': body = { topic: r.topic, groups: ids, records: screens.fairLinesIn(groups, r.query, now) }; break;
      case 'best_price': body = { topic: r.topic, groups: ids, records: screens.bestPricesIn(groups, r.query, this.signals) }; break;
      case 'ev': body = { topic: r.topic, groups: ids, records: screens.positiveEvIn(groups, r.query, now, this.signals) }; break;
      case 'middle': body = { topic: r.topic, groups: ids, records: screens.middlesIn(groups, r.query, this.signals) }; break;
    }
    return new SignalMessage(body as Record<string, unknown>);
  }

  private deliver(sub: Subscription, message: SignalMessage): void {
    this.messages++;
    // too far behind: the sink ends its connection, whose unsubscribe then finds it gone
    if (!sub.sink.send(sub.request.topic, message.json, message)) this.remove(sub);
  }
}
