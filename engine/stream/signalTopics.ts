// The signal stream's topics: the trader screens pushed as they change, with the same
// filters as their routes. Transport-free, like the stream hub: a subscriber is a
// TopicSink (the SSE route adapts its connection to it).
//
//   steam        each move as the sharp tick that made it is applied (one message per
//                move, serialized once and shared by every subscriber it matches)
//   fair_line, best_price, ev
//                at most once per interval (default 1 s; flush() at once), when
//                market groups changed since the last push: the groups re-read
//                (`groups`, their ids) and their current records passing the filter
//                (`records`); a client replaces what it holds for those groups, so a
//                record that left is a group listed without it
//   middle       the same: `groups` re-read, `records` the middles of their families
//                (the groups differing only in their line)
//
// A push of many groups (the first after subscribing may hold every group the load
// marked; a busy board marks thousands a second) is cut into messages of at most
// MESSAGE_GROUPS of a subscription's groups, each self-contained (its groups and their
// records; built once for every subscription asking the same), sent a slice of
// SLICE_MS at a time, one subscription's next message in turn, with the event loop free in
// between: a steam move, an ingest batch or a read waits for at most one slice, not for
// the whole push (6,792 groups re-read and serialised held the loop ~270 ms on the
// medium board). Which groups a message lists depends only on the push's groups and the
// subscription's filter; when it is built, its records are the groups' as the books hold
// them then (a tick in the meantime marks its group for the next push).
//
// While no group topic has a subscriber nothing is settled here: the books keep
// their marks until the next read. A market whose last row leaves the board is not
// announced on the group topics (its group is gone); the odds stream carries the removal.
import type { EngineSignals } from '../signals/engineSignals.ts';
import type {
  BestPriceQuery, FairLineQuery, MiddleQuery, PositiveEvQuery, SteamQuery, SteamRecord,
} from '../signals/screenRecords.ts';
import { matchesSteam } from '../signals/steamDetector.ts';

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
  /** One message (a JSON object's bytes); false when the client is too far behind (the sink then ends the connection). */
  send(topic: SignalTopic, bytes: Buffer): boolean;
}

interface Subscription {
  request: TopicQuery;
  sink: TopicSink;
  /** The request as text: subscriptions asking the same share each message's bytes. */
  key: string;
}

/** A group-topic push under way: its groups, and how far each subscription got through them. */
interface Push {
  groups: number[];
  /** Per subscription waiting for its next message: the index in `groups` it starts from (in turn order: served, a subscription goes to the back). */
  next: Map<Subscription, number>;
  /** The messages built so far, by request and starting index: serialised once for every subscription asking the same. */
  built: Map<string, { bytes: Buffer | null; end: number }>;
}

export class SignalTopics {
  private readonly subs = new Set<Subscription>();
  private groupSubscribers = 0;
  private readonly unsubscribeSteam: () => void;
  /** Messages sent so far (all topics). */
  messages = 0;

  private timer: NodeJS.Timeout | null = null;
  /** The push being sent in slices; null between pushes. */
  private push: Push | null = null;
  /** Groups were marked while a push was under way: the next one is scheduled when it ends. */
  private markedDuringPush = false;
  /** Slices group-topic pushes were sent in, and the longest one (ms), since the start. */
  readonly pushStats = { slices: 0, longestSliceMs: 0 };

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
    const sub: Subscription = { request, sink, key: JSON.stringify(request) };
    this.subs.add(sub);
    if (request.topic !== 'steam' && this.groupSubscribers++ === 0) {
      this.signals.books.screens.collecting = true;
      this.signals.appliedListener = () => this.schedule();
    }
    return () => this.remove(sub);
  }

  private remove(sub: Subscription): void {
    if (!this.subs.delete(sub)) return;
    if (sub.request.topic !== 'steam' && --this.groupSubscribers === 0) this.stopGroups();
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
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Whether a group-topic push is being sent (in slices). */
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
  }

  private steam(move: SteamRecord): void {
    let bytes: Buffer | null = null;
    for (const sub of this.subs) {
      if (sub.request.topic !== 'steam' || !matchesSteam(move, sub.request.query)) continue;
      bytes ??= Buffer.from(JSON.stringify({ topic: 'steam', move }));
      this.deliver(sub, bytes);
    }
  }

  /** Takes the groups marked since the last settle as the next push (none: nothing to push). */
  private startPush(): void {
    if (this.groupSubscribers === 0) return;
    const groups = this.signals.books.screens.takeCollected(this.signals);
    if (groups.length === 0) return;
    const next = new Map<Subscription, number>();
    for (const sub of this.subs) if (sub.request.topic !== 'steam') next.set(sub, 0);
    this.push = { groups, next, built: new Map() };
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
   * Sends messages of the push under way, one subscription's next message at a time in
   * turn, until `deadline` (performance.now(); at least one message); ends the push when
   * every subscription has had all of its groups.
   */
  private slice(deadline: number): void {
    const push = this.push!;
    const started = performance.now();
    const now = this.now();
    for (;;) {
      const first = push.next.entries().next();
      if (first.done === true) {
        this.push = null;
        break;
      }
      const [sub, from] = first.value;
      push.next.delete(sub);
      if (this.subs.has(sub)) {
        const end = this.message(push, sub, from, now);
        if (end < push.groups.length) push.next.set(sub, end); // to the back: the others' turn first
      }
      if (performance.now() >= deadline) break;
    }
    const ms = performance.now() - started;
    this.pushStats.slices++;
    if (ms > this.pushStats.longestSliceMs) this.pushStats.longestSliceMs = ms;
  }

  /**
   * Sends one subscription the message of its next MESSAGE_GROUPS groups of the push
   * (those passing its filter, from index `from`); returns the index after the last
   * group it looked at. Nothing is sent when no group from `from` on passes.
   */
  private message(push: Push, sub: Subscription, from: number, now: number): number {
    const key = `${from}:${sub.key}`;
    let message = push.built.get(key);
    if (message === undefined) {
      message = this.build(sub.request, push.groups, from, now);
      push.built.set(key, message);
    }
    if (message.bytes !== null) this.deliver(sub, message.bytes);
    return message.end;
  }

  /** The message of a request's next MESSAGE_GROUPS groups from `from` (bytes null: none from there on passes its filter). */
  private build(r: TopicQuery, groups: readonly number[], from: number, now: number): { bytes: Buffer | null; end: number } {
    const screens = this.signals.books.screens;
    const mine: number[] = [];
    let i = from;
    while (i < groups.length && mine.length < MESSAGE_GROUPS) {
      const g = groups[i++]!;
      if (r.topic !== 'steam' && screens.passes(g, r.query)) mine.push(g);
    }
    if (mine.length === 0) return { bytes: null, end: i };
    const ids = mine.map((g) => this.signals.groups.id[g]);
    let body: unknown;
    switch (r.topic) {
      case 'steam': return { bytes: null, end: i };
      case 'fair_line': body = { topic: r.topic, groups: ids, records: screens.fairLinesIn(mine, r.query, now) }; break;
      case 'best_price': body = { topic: r.topic, groups: ids, records: screens.bestPricesIn(mine, r.query, this.signals) }; break;
      case 'ev': body = { topic: r.topic, groups: ids, records: screens.positiveEvIn(mine, r.query, now, this.signals) }; break;
      case 'middle': body = { topic: r.topic, groups: ids, records: screens.middlesIn(mine, r.query, this.signals) }; break;
    }
    return { bytes: Buffer.from(JSON.stringify(body)), end: i };
  }

  private deliver(sub: Subscription, bytes: Buffer): void {
    this.messages++;
    // too far behind: the sink ends its connection, whose unsubscribe then finds it gone
    if (!sub.sink.send(sub.request.topic, bytes)) this.remove(sub);
  }
}
