// One subscription's pending events, in memory: a replay lane (events queued again by
// an operator, delivered first, in their order) and the live lane (the outbox's events
// that match the subscription's filters, in outbox order). The outbox stores each event
// once; a live lane is what its filters select after the subscription's cursor, so it
// is rebuilt from the outbox after a restart, and when it would grow past LANE_CAP (an
// endpoint down for hours) it stops taking events ("spilled") and reads them back from
// the outbox, LANE_CAP at a time, once it has drained: memory stays bounded whatever the
// backlog. The read-back goes through the store's shared blocks (outboxReadBack.ts):
// endpoints behind together read and parse each stretch of the outbox once between them.
import type { AlertEvent } from './alertEvent.ts';
import type { AlertsStore, ReplayEntry, Subscription } from './alertsStore.ts';
import { anyMatches } from './filters.ts';
import { BLOCK_EVENTS, blockOf } from './outboxReadBack.ts';

export const LANE_CAP = 10_000;
const SCAN = 1000;

/** The next batch: its events' seqs, and for a replay batch the replay positions. */
export interface Batch {
  lane: 'live' | 'replay';
  seqs: number[];
  replays: ReplayEntry[];
}

export class DeliveryQueue {
  private live: number[] = [];
  private head = 0;
  private replays: ReplayEntry[];
  /** Every outbox event with seq <= examined was matched against the filters (the matches are in the lane or done). */
  private examined: number;
  /** The lane is not complete: events after `examined` are read from the outbox when it drains. */
  private spilled: boolean;

  /** fresh: a subscription made now (nothing before it is its); else rebuilt from the outbox after its cursor. */
  constructor(
    private readonly subscription: Subscription,
    private readonly store: AlertsStore,
    fresh: boolean,
  ) {
    this.replays = store.replaysOf(subscription.id);
    this.examined = subscription.cursor;
    this.spilled = !fresh;
  }

  /** The producer's tick: an event written to the outbox, matching the filters or not (in seq order). */
  offer(seq: number, matches: boolean): void {
    if (this.spilled) return;
    if (matches) {
      if (this.live.length - this.head >= LANE_CAP) {
        this.spilled = true;
        return;
      }
      this.live.push(seq);
    }
    this.examined = seq;
  }

  addReplays(entries: readonly ReplayEntry[]): void {
    for (const e of entries) this.replays.push(e);
  }

  /** Up to `max` events: the replay lane first, else the live lane (read back from the outbox when spilled and drained). */
  next(max: number): Batch | null {
    if (this.replays.length > 0) {
      const replays = this.replays.slice(0, max);
      return { lane: 'replay', seqs: replays.map((r) => r.seq), replays };
    }
    if (this.head === this.live.length && this.spilled) this.refill();
    if (this.head === this.live.length) return null;
    return { lane: 'live', seqs: this.live.slice(this.head, this.head + max), replays: [] };
  }

  /** The seq of the event that goes next, without taking it (null: none in memory). */
  nextSeq(): number | null {
    if (this.replays.length > 0) return this.replays[0]!.seq;
    return this.head < this.live.length ? this.live[this.head]! : null;
  }

  /** The batch was delivered or dead-lettered: it leaves its lane; the cursor moves past it. */
  done(batch: Batch): void {
    if (batch.lane === 'replay') {
      this.replays.splice(0, batch.replays.length);
      return;
    }
    this.head += batch.seqs.length;
    this.subscription.cursor = batch.seqs[batch.seqs.length - 1]!;
    if (this.head > 4096 && this.head * 2 > this.live.length) {
      this.live = this.live.slice(this.head);
      this.head = 0;
    }
  }

  /** The cursor this subscription could have (everything up to it done): for pruning. */
  get doneThrough(): number {
    return this.head === this.live.length && !this.spilled && this.replays.length === 0 ? Math.max(this.examined, this.subscription.cursor) : this.subscription.cursor;
  }

  /** Starts over after the outbox's newest event (a subscription enabled again: what came while it was disabled is not its). */
  reset(lastSeq: number): void {
    this.live = [];
    this.head = 0;
    this.examined = lastSeq;
    this.spilled = false;
    this.subscription.cursor = lastSeq;
  }

  /** Events waiting in memory (a spilled lane has more in the outbox: then at least LANE_CAP). */
  get queued(): number {
    return this.spilled ? LANE_CAP : this.replays.length + this.live.length - this.head;
  }

  /** Events waiting (replays included); a spilled lane's rest is counted from the outbox. */
  pending(): number {
    let count = this.replays.length + this.live.length - this.head;
    if (!this.spilled) return count;
    for (let after = this.examined; ; ) {
      const rows = this.store.eventsAfter(after, SCAN);
      for (const row of rows) if (this.matches(row.body)) count++;
      if (rows.length < SCAN) return count;
      after = rows[rows.length - 1]!.seq;
    }
  }

  private matches(body: string): boolean {
    return anyMatches(this.subscription.filters, JSON.parse(body) as AlertEvent);
  }

  /**
   * Reads the lane on from the outbox, a whole block at a time, until it holds at least
   * LANE_CAP matches; complete again once the outbox's newest event is examined.
   */
  private refill(): void {
    this.live = [];
    this.head = 0;
    const { filters } = this.subscription;
    const newest = this.store.lastSeq();
    while (this.live.length < LANE_CAP) {
      if (this.examined >= newest) {
        this.examined = newest;
        this.spilled = false;
        return;
      }
      const k = blockOf(this.examined + 1);
      for (const row of this.store.readBack.block(k)) {
        if (row.seq > this.examined && anyMatches(filters, row.event)) this.live.push(row.seq);
      }
      this.examined = Math.min(newest, (k + 1) * BLOCK_EVENTS);
    }
  }
}
