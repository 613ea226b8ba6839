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
// While no group topic has a subscriber nothing is settled here: the books keep
// their marks until the next read. A market whose last row leaves the board is not
// announced on the group topics (its group is gone); the odds stream carries the removal.
import type { EngineSignals } from '../signals/engineSignals.ts';
import type {
  BestPriceQuery, FairLineQuery, MiddleQuery, PositiveEvQuery, SteamQuery, SteamRecord,
} from '../signals/screenRecords.ts';
import { matchesSteam } from '../signals/steamDetector.ts';

export const SIGNAL_TOPICS = ['steam', 'fair_line', 'best_price', 'ev', 'middle'] as const;
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
}

export class SignalTopics {
  private readonly subs = new Set<Subscription>();
  private groupSubscribers = 0;
  private readonly unsubscribeSteam: () => void;
  /** Messages sent so far (all topics). */
  messages = 0;

  private timer: NodeJS.Timeout | null = null;

  /**
   * intervalMs: the group topics push at most this often (the changed groups conflate:
   * a burst of ticks on one market is one re-read and one record); 0: after every apply.
   */
  constructor(private readonly signals: EngineSignals, private readonly now: () => number, private readonly intervalMs = 1000) {
    this.unsubscribeSteam = signals.onSteam((move) => this.steam(move));
  }

  subscribe(request: TopicQuery, sink: TopicSink): () => void {
    const sub: Subscription = { request, sink };
    this.subs.add(sub);
    if (request.topic !== 'steam' && this.groupSubscribers++ === 0) {
      this.signals.books.screens.collecting = true;
      this.signals.appliedListener = () => this.schedule();
    }
    return () => {
      if (!this.subs.delete(sub)) return;
      if (request.topic !== 'steam' && --this.groupSubscribers === 0) this.stopGroups();
    };
  }

  /** Pushes the group topics now (tests, and the bench's measure of one push). */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.groupsChanged();
  }

  private schedule(): void {
    if (this.intervalMs === 0) { this.groupsChanged(); return; }
    if (this.timer !== null) return;
    this.timer = setTimeout(() => { this.timer = null; this.groupsChanged(); }, this.intervalMs);
    this.timer.unref();
  }

  private stopGroups(): void {
    this.signals.appliedListener = null;
    this.signals.books.screens.collecting = false;
    this.signals.books.screens.takeCollected(this.signals);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
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

  /** The groups marked since the last settle, evaluated for each group-topic subscription. */
  private groupsChanged(): void {
    const screens = this.signals.books.screens;
    if (this.groupSubscribers === 0) return;
    const groups = screens.takeCollected(this.signals);
    if (groups.length === 0) return;
    const now = this.now();
    const ids = groups.map((g) => this.signals.groups.id[g]);
    for (const sub of this.subs) {
      const r = sub.request;
      let body: unknown;
      switch (r.topic) {
        case 'steam': continue;
        case 'fair_line': body = { topic: r.topic, groups: this.relevant(groups, ids, r.query), records: screens.fairLinesIn(groups, r.query, now) }; break;
        case 'best_price': body = { topic: r.topic, groups: this.relevant(groups, ids, r.query), records: screens.bestPricesIn(groups, r.query, this.signals) }; break;
        case 'ev': body = { topic: r.topic, groups: this.relevant(groups, ids, r.query), records: screens.positiveEvIn(groups, r.query, now, this.signals) }; break;
        case 'middle': {
          const mine = groups.filter((g) => screens.passes(g, r.query));
          if (mine.length === 0) continue;
          body = { topic: r.topic, groups: mine.map((g) => this.signals.groups.id[g]), records: screens.middlesIn(mine, r.query, this.signals) };
          break;
        }
      }
      const message = body as { groups?: string[]; records: unknown[] };
      if (message.groups !== undefined && message.groups.length === 0) continue;
      this.deliver(sub, Buffer.from(JSON.stringify(body)));
    }
  }

  /** The ids of the re-read groups that pass a subscription's filter. */
  private relevant(groups: readonly number[], ids: readonly string[], filter: FairLineQuery | BestPriceQuery | PositiveEvQuery): string[] {
    const out: string[] = [];
    for (let i = 0; i < groups.length; i++) if (this.signals.books.screens.passes(groups[i]!, filter)) out.push(ids[i]!);
    return out;
  }

  private deliver(sub: Subscription, bytes: Buffer): void {
    this.messages++;
    if (!sub.sink.send(sub.request.topic, bytes)) this.subs.delete(sub);
  }
}
