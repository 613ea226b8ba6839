// Webhook subscription filters: which alert events a subscription receives. A
// subscription holds a list of filters and receives an event when any of them matches.
// Each kind is one entry of FILTER_KINDS: the event types it consumes, how its JSON is
// checked (every refusal names the field) and how it matches an event. A new signal
// (steam moves, all-book +EV) adds its event types to alertEvent.ts, a producer source
// (alerts/sources/) and one entry here; nothing else changes.
import { EVENT_STATUSES, type EventStatus } from '../engine/model.ts';
import type { AlertEvent, AlertEventType, ArbitrageAlert, EdgeAlert, EventStatusAlert, LineMoveAlert } from './alertEvent.ts';

export class FilterError extends Error {
  constructor(
    readonly field: string,
    detail: string,
    readonly validValues?: readonly string[],
  ) {
    super(detail);
  }
}

export interface ArbitrageFilter {
  type: 'arbitrage';
  /** Fractional margin (0.01 = 1%); an event passes when the arbitrage's profit (or its peak, for closed) is at least this. */
  minProfit: number;
  leagues: string[] | null;
  eventIds: string[] | null;
}

export interface EdgeFilter {
  type: 'edge';
  /** In [0, 1], like /edges' min_edge. */
  minEdge: number;
  leagues: string[] | null;
  /** DFS source ids. */
  sources: string[] | null;
  eventIds: string[] | null;
}

export interface LineMoveFilter {
  type: 'line_move';
  /** Odds row ids ({eventId}:{book}:{subtype}:{selectionId}); a row not on the board yet is watched for when it appears. */
  oddsIds: string[];
}

export interface EventStatusFilter {
  type: 'event_status';
  eventIds: string[] | null;
  leagues: string[] | null;
  /** The statuses an event moves to; null: every change. */
  statuses: EventStatus[] | null;
}

export type AlertFilter = ArbitrageFilter | EdgeFilter | LineMoveFilter | EventStatusFilter;

interface FilterKind<F extends AlertFilter> {
  /** The event types this kind can match. */
  eventTypes: readonly AlertEventType[];
  parse(raw: Record<string, unknown>, at: string): F;
  matches(filter: F, event: AlertEvent): boolean;
}

export const MAX_LIST = 1000;

function list(raw: Record<string, unknown>, name: string, at: string, lower: boolean, required = false): string[] | null {
  const value = raw[name];
  if (value === undefined || value === null) {
    if (required) throw new FilterError(`${at}.${name}`, `${at}.${name} is required: an array of 1 to ${MAX_LIST} strings`);
    return null;
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST || !value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 256)) {
    throw new FilterError(`${at}.${name}`, `${at}.${name} must be an array of 1 to ${MAX_LIST} non-empty strings (at most 256 characters each)`);
  }
  return [...new Set(lower ? value.map((v: string) => v.toLowerCase()) : (value as string[]))];
}

function fraction(raw: Record<string, unknown>, name: string, at: string, fallback: number, max: number): number {
  const value = raw[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) throw new FilterError(`${at}.${name}`, `${at}.${name} must be a number from 0 to ${max}`);
  return value;
}

function only(raw: Record<string, unknown>, at: string, allowed: readonly string[]): void {
  for (const key of Object.keys(raw)) if (key !== 'type' && !allowed.includes(key)) throw new FilterError(`${at}.${key}`, `${at} has an unknown field ${key}; its fields are ${allowed.join(', ')}`, allowed);
}

const within = (values: string[] | null, value: string): boolean => values === null || values.includes(value);

const arbitrage: FilterKind<ArbitrageFilter> = {
  eventTypes: ['arbitrage.opened', 'arbitrage.updated', 'arbitrage.closed'],
  parse(raw, at) {
    only(raw, at, ['minProfit', 'leagues', 'eventIds']);
    return { type: 'arbitrage', minProfit: fraction(raw, 'minProfit', at, 0.001, 10), leagues: list(raw, 'leagues', at, true), eventIds: list(raw, 'eventIds', at, false) };
  },
  matches(filter, event) {
    const { arbitrage: record, previousProfit, peakProfit } = event.data as ArbitrageAlert;
    if (!within(filter.leagues, record.league) || !within(filter.eventIds, record.eventId)) return false;
    // opened/updated reach a subscription while the profit is at its threshold, and
    // once more when it falls below (updated from above); closed when the peak reached it
    if (event.type === 'arbitrage.closed') return peakProfit >= filter.minProfit;
    return record.profit >= filter.minProfit || (previousProfit !== null && previousProfit >= filter.minProfit);
  },
};

const edge: FilterKind<EdgeFilter> = {
  eventTypes: ['edge.opened', 'edge.updated', 'edge.closed'],
  parse(raw, at) {
    only(raw, at, ['minEdge', 'leagues', 'sources', 'eventIds']);
    return { type: 'edge', minEdge: fraction(raw, 'minEdge', at, 0.02, 1), leagues: list(raw, 'leagues', at, true), sources: list(raw, 'sources', at, true), eventIds: list(raw, 'eventIds', at, false) };
  },
  matches(filter, event) {
    const { edge: record, previousEdge, peakEdge } = event.data as EdgeAlert;
    if (!within(filter.leagues, record.league) || !within(filter.sources, record.source) || !within(filter.eventIds, record.eventId)) return false;
    if (event.type === 'edge.closed') return peakEdge >= filter.minEdge;
    return record.edge >= filter.minEdge || (previousEdge !== null && previousEdge >= filter.minEdge);
  },
};

/** A line_move filter's ids as a set (up to 1,000 ids, matched for every event against every subscription). */
const idSets = new WeakMap<LineMoveFilter, Set<string>>();

const lineMove: FilterKind<LineMoveFilter> = {
  eventTypes: ['line.moved'],
  parse(raw, at) {
    only(raw, at, ['oddsIds']);
    return { type: 'line_move', oddsIds: list(raw, 'oddsIds', at, false, true)! };
  },
  matches(filter, event) {
    let ids = idSets.get(filter);
    if (ids === undefined) idSets.set(filter, (ids = new Set(filter.oddsIds)));
    return ids.has((event.data as LineMoveAlert).oddsId);
  },
};

const eventStatus: FilterKind<EventStatusFilter> = {
  eventTypes: ['event.status_changed'],
  parse(raw, at) {
    only(raw, at, ['eventIds', 'leagues', 'statuses']);
    const statuses = list(raw, 'statuses', at, true);
    const bad = statuses?.find((s) => !(EVENT_STATUSES as readonly string[]).includes(s));
    if (bad !== undefined) throw new FilterError(`${at}.statuses`, `${at}.statuses holds ${bad}, not an event status`, EVENT_STATUSES);
    return { type: 'event_status', eventIds: list(raw, 'eventIds', at, false), leagues: list(raw, 'leagues', at, true), statuses: statuses as EventStatus[] | null };
  },
  matches(filter, event) {
    const data = event.data as EventStatusAlert;
    return within(filter.eventIds, data.eventId) && within(filter.leagues, data.league) && (filter.statuses === null || filter.statuses.includes(data.to));
  },
};

export const FILTER_KINDS = { arbitrage, edge, line_move: lineMove, event_status: eventStatus } as const;
export type FilterType = keyof typeof FILTER_KINDS;
export const FILTER_TYPES = Object.keys(FILTER_KINDS) as FilterType[];

export const MAX_FILTERS = 50;

/** Checks a subscription's `filters` (JSON as sent or as stored); throws FilterError naming the field. */
export function parseFilters(raw: unknown): AlertFilter[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_FILTERS) throw new FilterError('filters', `filters must be an array of 1 to ${MAX_FILTERS} filters`);
  return raw.map((item, i) => {
    const at = `filters[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new FilterError(at, `${at} must be an object with a type`);
    const type = (item as Record<string, unknown>).type;
    const kind = typeof type === 'string' && Object.hasOwn(FILTER_KINDS, type) ? FILTER_KINDS[type as FilterType] : undefined;
    if (kind === undefined) throw new FilterError(`${at}.type`, `${at}.type must be one of ${FILTER_TYPES.join(', ')}`, FILTER_TYPES);
    return (kind as FilterKind<AlertFilter>).parse(item as Record<string, unknown>, at);
  });
}

/** The odds ids of the line_move filters, each once: a line.moved event is taken by these filters exactly when its oddsId is one of them. */
export function watchedOddsIds(filters: readonly AlertFilter[]): Set<string> {
  const ids = new Set<string>();
  for (const f of filters) if (f.type === 'line_move') for (const id of f.oddsIds) ids.add(id);
  return ids;
}

/** Whether any of the filters takes the event. */
export function anyMatches(filters: readonly AlertFilter[], event: AlertEvent): boolean {
  for (const filter of filters) {
    const kind = FILTER_KINDS[filter.type] as FilterKind<AlertFilter>;
    if (kind.eventTypes.includes(event.type) && kind.matches(filter, event)) return true;
  }
  return false;
}
