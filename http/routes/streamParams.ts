// What a stream client may ask, validated as the HTTP routes validate: the filters of a
// subscription go through the same query parser, with the same parameter definitions
// (limits, casing, enums) as /odds, so a filter /odds refuses is refused here with the
// same sentence. WebSocket clients send JSON messages (camelCase names); the SSE route
// takes the same fields as query parameters.
import { QueryParser } from '../params.ts';
import type { ParamDef } from '../schemas.ts';
import { HttpError } from '../errors.ts';
import { EVENT_ID, LEAGUE, MARKET, ODDS_FORMAT, PLAYER_ID, SPORTSBOOK } from './oddsParams.ts';
import type { SubscribeRequest } from '../../engine/stream/streamSink.ts';
import type { StreamFilter } from '../../engine/stream/streamFilter.ts';
import { WIRE_FORMATS, type WireFormat } from '../../engine/stream/streamMessages.ts';
import type { OddsFormat } from '../../engine/rowJson.ts';

export const HEARTBEAT_MS = { min: 500, max: 30_000, default: 5000 } as const;
export const CONFLATE_MS = { min: 0, max: 60_000, default: 0 } as const;
const MAX_ID_LENGTH = 64;

export const STREAM_HEARTBEAT = {
  name: 'heartbeat_ms',
  kind: 'integer',
  minimum: HEARTBEAT_MS.min,
  maximum: HEARTBEAT_MS.max,
  default: HEARTBEAT_MS.default,
  description: 'A heartbeat event after this many milliseconds without other traffic.',
} as const satisfies ParamDef;

export const STREAM_CONFLATE = {
  name: 'conflate_ms',
  kind: 'integer',
  minimum: CONFLATE_MS.min,
  maximum: CONFLATE_MS.max,
  default: CONFLATE_MS.default,
  description: '0: a delta per applied change batch; otherwise at most one delta per this many milliseconds, holding each row\'s latest state.',
} as const satisfies ParamDef;

export const STREAM_CLK = {
  name: 'clk',
  kind: 'string',
  maxLength: 100,
  description: 'Resume point: the clk of the last image or delta applied (the Last-Event-ID header wins over it).',
} as const satisfies ParamDef;

export const STREAM_KEY = {
  name: 'key',
  kind: 'string',
  maxLength: 200,
  description: 'The API key, for clients that cannot send X-Api-Key or Authorization (a browser\'s EventSource or WebSocket).',
} as const satisfies ParamDef;

/** The filter and format parameters, as on /odds. */
const FILTER_PARAMS = [LEAGUE, SPORTSBOOK, MARKET, EVENT_ID, PLAYER_ID, ODDS_FORMAT] as const;
export const SSE_QUERY = [...FILTER_PARAMS, STREAM_CLK, STREAM_HEARTBEAT, STREAM_CONFLATE, STREAM_KEY] as const;

/** WebSocket field -> query parameter of the same meaning. */
const FIELD_PARAM: Readonly<Record<string, string>> = {
  league: 'league',
  sportsbook: 'sportsbook',
  market: 'market',
  eventId: 'event_id',
  playerId: 'player_id',
};
const PARAM_FIELD: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(FIELD_PARAM).map(([field, param]) => [param, `filter.${field}`])),
  odds_format: 'oddsFormat',
};

const filterParser = new QueryParser(FILTER_PARAMS);

/** A client message the stream cannot act on. */
export class StreamRequestError extends Error {
  constructor(
    readonly detail: string,
    readonly id: string | undefined,
    readonly param: string | null,
    readonly code: 'invalid_subscription' = 'invalid_subscription',
  ) {
    super(detail);
  }
}

/** A client message of a stream's WebSocket, its subscribe body of type S. */
export type StreamClientMessage<S> = { op: 'subscribe'; subscribe: S } | { op: 'unsubscribe'; id: string } | { op: 'heartbeat' };

export type ClientMessage = StreamClientMessage<SubscribeRequest>;

/**
 * Parses one WebSocket text frame of a stream (the odds stream's or the signal stream's):
 * one JSON object, its op, its id; `subscribeOf` parses a subscribe's own fields. Throws
 * StreamRequestError.
 */
export function parseStreamFrame<S>(text: string, subscribeOf: (m: Record<string, unknown>, id: string) => S): StreamClientMessage<S> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw new StreamRequestError('a client message is one JSON object per text frame', undefined, null);
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new StreamRequestError('a client message is one JSON object per text frame', undefined, null);
  }
  const m = message as Record<string, unknown>;
  const id = typeof m.id === 'string' ? m.id : undefined;
  switch (m.op) {
    case 'heartbeat':
      return { op: 'heartbeat' };
    case 'unsubscribe':
      return { op: 'unsubscribe', id: requireId(m.id) };
    case 'subscribe':
      return { op: 'subscribe', subscribe: subscribeOf(m, requireId(m.id)) };
    default:
      throw new StreamRequestError('op must be one of subscribe, unsubscribe, heartbeat', id, 'op');
  }
}

/** Parses one WebSocket text frame of the odds stream. Throws StreamRequestError. */
export function parseClientMessage(text: string): ClientMessage {
  return parseStreamFrame(text, subscribeRequest);
}

const SUBSCRIBE_FIELDS = new Set(['op', 'id', 'filter', 'clk', 'heartbeatMs', 'conflateMs', 'format', 'oddsFormat']);

function subscribeRequest(m: Record<string, unknown>, id: string): SubscribeRequest {
  for (const key of Object.keys(m)) if (!SUBSCRIBE_FIELDS.has(key)) throw new StreamRequestError(`unknown subscribe field ${key}`, id, key);
  const query: string[] = [];
  if (m.filter !== undefined && m.filter !== null) {
    if (typeof m.filter !== 'object' || Array.isArray(m.filter)) throw new StreamRequestError('filter must be an object', id, 'filter');
    for (const [field, value] of Object.entries(m.filter as Record<string, unknown>)) {
      const param = FIELD_PARAM[field];
      if (param === undefined) throw new StreamRequestError(`unknown filter field ${field}; the filters are ${Object.keys(FIELD_PARAM).join(', ')}`, id, `filter.${field}`);
      const text = filterText(value, field, id, param === 'player_id' ? 1 : Infinity);
      if (text !== '') query.push(`${param}=${encodeURIComponent(text)}`);
    }
  }
  if (m.oddsFormat !== undefined) {
    if (typeof m.oddsFormat !== 'string') throw new StreamRequestError('oddsFormat must be a string', id, 'oddsFormat');
    query.push(`odds_format=${encodeURIComponent(m.oddsFormat)}`);
  }
  let values: Record<string, unknown>;
  try {
    values = filterParser.parse(query.join('&')).values;
  } catch (error) {
    if (error instanceof HttpError) throw new StreamRequestError(error.detail, id, error.param === null ? null : (PARAM_FIELD[error.param] ?? error.param));
    throw error;
  }
  const format = m.format ?? 'json';
  if (typeof format !== 'string' || !WIRE_FORMATS.includes(format as WireFormat)) throw new StreamRequestError(`format must be one of ${WIRE_FORMATS.join(', ')}`, id, 'format');
  if (m.clk !== undefined && m.clk !== null && typeof m.clk !== 'string') throw new StreamRequestError('clk must be a string: the clk of the last message applied', id, 'clk');
  return {
    id,
    filter: filterOf(values),
    clk: typeof m.clk === 'string' && m.clk !== '' ? m.clk : null,
    heartbeatMs: integerIn(m.heartbeatMs, 'heartbeatMs', HEARTBEAT_MS, id),
    conflateMs: integerIn(m.conflateMs, 'conflateMs', CONFLATE_MS, id),
    format: format as WireFormat,
    oddsFormat: values.odds_format as OddsFormat,
  };
}

/** The SSE route's parsed query (the facade already validated it with SSE_QUERY). */
export function sseRequest(query: Record<string, unknown>, lastEventId: string | null): SubscribeRequest {
  const clk = lastEventId !== null && lastEventId !== '' ? lastEventId : ((query.clk as string | undefined) ?? null);
  return {
    id: 'sse',
    filter: filterOf(query),
    clk,
    heartbeatMs: query.heartbeat_ms as number,
    conflateMs: query.conflate_ms as number,
    format: 'json',
    oddsFormat: query.odds_format as OddsFormat,
  };
}

function filterOf(values: Record<string, unknown>): StreamFilter {
  const list = (value: unknown) => (value === undefined ? null : [...(value as string[])]);
  return {
    leagues: list(values.league),
    sportsbooks: list(values.sportsbook),
    markets: list(values.market),
    eventIds: list(values.event_id),
    playerId: (values.player_id as string | undefined) ?? null,
  };
}

export function requireId(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_ID_LENGTH) {
    throw new StreamRequestError(`id must be a string of 1 to ${MAX_ID_LENGTH} characters naming the subscription`, undefined, 'id');
  }
  return value;
}

/** A filter value: an array of strings (or one string); commas cannot be inside a value, as on /odds. */
export function filterText(value: unknown, field: string, id: string, maxItems: number): string {
  const items = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
  if (items === null || items.some((item) => typeof item !== 'string' || item.includes(','))) {
    throw new StreamRequestError(`filter.${field} must be an array of strings (no commas inside a value)`, id, `filter.${field}`);
  }
  if (items.length > maxItems) throw new StreamRequestError(`filter.${field} takes at most ${maxItems} value, as player_id on /odds`, id, `filter.${field}`);
  return (items as string[]).join(',');
}

function integerIn(value: unknown, field: string, range: { min: number; max: number; default: number }, id: string): number {
  if (value === undefined || value === null) return range.default;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
    throw new StreamRequestError(`${field} must be an integer from ${range.min} to ${range.max}`, id, field);
  }
  return value;
}
