// One alert event: what the producer (alerts/alertProducer.ts) derives from the board
// and the signal books, what the outbox stores once, and what every matching webhook
// subscription receives. `id` is the idempotency id: a retried or replayed delivery
// carries the same id, so a receiver that remembers the ids it processed handles each
// event once.
import type { ArbitrageRecord, EdgeRecord } from '../engine/signals/records.ts';
import type { EventStatus } from '../engine/model.ts';

/** Every event type, one definition; the filters (filters.ts) say which ones each kind receives. */
export const ALERT_EVENT_TYPES = [
  'arbitrage.opened',
  'arbitrage.updated',
  'arbitrage.closed',
  'edge.opened',
  'edge.updated',
  'edge.closed',
  'line.moved',
  'event.status_changed',
] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

/** An arbitrage event: the record as /arbitrage serves it (the last one seen, for closed). */
export interface ArbitrageAlert {
  arbitrage: ArbitrageRecord;
  /** updated: the profit at the previous event of this arbitrage; null on opened. */
  previousProfit: number | null;
  /** The highest profit since it opened (a closed arbitrage reaches the subscriptions its peak passed). */
  peakProfit: number;
}

export interface EdgeAlert {
  edge: EdgeRecord;
  previousEdge: number | null;
  peakEdge: number;
}

/** The fields of an odds row that a line move compares. */
export interface QuoteState {
  priceAmerican: number | null;
  priceDecimal: number | null;
  dfsMultiplier: number | null;
  line: number | null;
  suspended: boolean;
  /** false: the row was removed (a tombstone; event final, market pulled). */
  live: boolean;
}

export interface LineMoveAlert {
  oddsId: string;
  eventId: string;
  league: string;
  sportsbook: string;
  /** null: the row was not on the board before (it appeared). */
  from: QuoteState | null;
  to: QuoteState;
  /** The row's updated time, ISO-8601 with ms. */
  updated: string;
}

export interface EventStatusAlert {
  eventId: string;
  league: string;
  from: EventStatus;
  to: EventStatus;
}

export type AlertData = ArbitrageAlert | EdgeAlert | LineMoveAlert | EventStatusAlert;

export interface AlertEvent {
  id: string;
  type: AlertEventType;
  /** Engine clock, epoch ms. */
  createdAt: number;
  data: AlertData;
}

/** One event of the outbox as read back. */
export interface StoredEvent {
  seq: number;
  id: string;
  type: string;
  createdAt: number;
  body: string;
  /**
   * The body's UTF-8 bytes: a view of its tick's buffer (the tick's events joined by
   * commas, as the delivery thread received them), or made at the first delivery that
   * sends it (deliveryWorker.ts). Kept with the event: a thousand endpoints sending it
   * send these bytes, none encodes the string again.
   */
  bytes?: Buffer;
  /** Wall-clock ms this process wrote it to the outbox (in memory only: for the oldest-pending metric). */
  receivedAt?: number;
}
