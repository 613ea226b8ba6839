// What a signal-stream client may ask, one definition for both doors: the SSE stream
// (GET /api/v1/stream/signals) takes it as its query string, the WebSocket stream
// (/api/v1/stream/signals/ws) as subscribe messages whose fields are turned into the
// same query and parsed by the same parameter definitions, so a topic, filter or
// limit one door refuses the other refuses with the same sentence (named by the
// message's field). The filters are those of the topic's route (http/routes/screens.ts).
import { SIGNAL_TOPICS, type TopicQuery } from '../../engine/stream/signalTopics.ts';
import { WIRE_FORMATS, type WireFormat } from '../../engine/stream/streamMessages.ts';
import { HttpError } from '../errors.ts';
import { QueryParser } from '../params.ts';
import type { ParamDef, QueryOf } from '../schemas.ts';
import { EVENT_ID } from './oddsParams.ts';
import { LEAGUE, MAX_COST, MAX_HOLD, MIN_CENTS, MIN_EV, MIN_POINTS, MIN_WIDTH, SCREEN_DEVIG, SPORTSBOOK } from './screens.ts';
import { filterText, parseStreamFrame, StreamRequestError, type StreamClientMessage } from './streamParams.ts';

const TOPIC = {
  name: 'topic',
  kind: 'enum',
  values: SIGNAL_TOPICS,
  required: true,
  description: 'steam (each move as it is seen), fair_line, best_price, ev or middle (at most once a second, when markets changed: the market groups re-read and their current records, at most 64 groups a message).',
} as const satisfies ParamDef;

export const SIGNAL_HEARTBEAT_MS = { min: 500, max: 30_000, default: 15_000 } as const;

const HEARTBEAT = {
  name: 'heartbeat_ms',
  kind: 'integer',
  minimum: SIGNAL_HEARTBEAT_MS.min,
  maximum: SIGNAL_HEARTBEAT_MS.max,
  default: SIGNAL_HEARTBEAT_MS.default,
  description: 'A comment line after this long without other traffic (500..30000, default 15000).',
} as const satisfies ParamDef;

export const SIGNAL_STREAM_QUERY = [TOPIC, LEAGUE, EVENT_ID, SPORTSBOOK, SCREEN_DEVIG, MIN_EV, MAX_HOLD, MIN_WIDTH, MAX_COST, MIN_POINTS, MIN_CENTS, HEARTBEAT] as const;
export type SignalStreamQuery = QueryOf<typeof SIGNAL_STREAM_QUERY>;

/** The signal topics' request from the parsed parameters; `now` starts a steam subscription's moves. */
export function topicQuery(q: SignalStreamQuery, now: number): TopicQuery {
  const filter = { leagues: q.league ?? null, eventIds: q.event_id ?? null };
  switch (q.topic) {
    case 'steam': return { topic: 'steam', query: { ...filter, sportsbooks: q.sportsbook ?? null, minPoints: q.min_points, minCents: q.min_cents, since: now } };
    case 'fair_line': return { topic: 'fair_line', query: { ...filter, devig: q.devig } };
    case 'best_price': return { topic: 'best_price', query: { ...filter, maxHold: q.max_hold } };
    case 'ev': return { topic: 'ev', query: { ...filter, devig: q.devig, minEv: q.min_ev, sportsbooks: q.sportsbook ?? null } };
    case 'middle': return { topic: 'middle', query: { ...filter, minWidth: q.min_width, maxCost: q.max_cost } };
  }
}

// ---- the WebSocket stream's client messages ------------------------------------

/** A subscribe message's field -> the query parameter of the same meaning. */
const FIELD_PARAM: Readonly<Record<string, string>> = {
  topic: 'topic',
  devig: 'devig',
  minEv: 'min_ev',
  maxHold: 'max_hold',
  minWidth: 'min_width',
  maxCost: 'max_cost',
  minPoints: 'min_points',
  minCents: 'min_cents',
  heartbeatMs: 'heartbeat_ms',
};
/** The filter object's field -> its query parameter. */
const FILTER_PARAM: Readonly<Record<string, string>> = { league: 'league', eventId: 'event_id', sportsbook: 'sportsbook' };
const PARAM_FIELD: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(FIELD_PARAM).map(([field, param]) => [param, field])),
  ...Object.fromEntries(Object.entries(FILTER_PARAM).map(([field, param]) => [param, `filter.${field}`])),
};
const SUBSCRIBE_FIELDS = new Set(['op', 'id', 'filter', 'format', ...Object.keys(FIELD_PARAM)]);

const parser = new QueryParser(SIGNAL_STREAM_QUERY);

export interface SignalSubscribe {
  id: string;
  /** The parsed parameters (topicQuery makes the request when the subscription opens). */
  query: SignalStreamQuery;
  format: WireFormat;
}

export type SignalClientMessage = StreamClientMessage<SignalSubscribe>;

/** Parses one WebSocket text frame of the signal stream. Throws StreamRequestError. */
export function parseSignalClientMessage(text: string): SignalClientMessage {
  return parseStreamFrame(text, subscribeOf);
}

function subscribeOf(m: Record<string, unknown>, id: string): SignalSubscribe {
  for (const key of Object.keys(m)) if (!SUBSCRIBE_FIELDS.has(key)) throw new StreamRequestError(`unknown subscribe field ${key}`, id, key);
  const query: string[] = [];
  for (const [field, param] of Object.entries(FIELD_PARAM)) {
    const value = m[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) query.push(`${param}=${encodeURIComponent(String(value))}`);
    else throw new StreamRequestError(`${field} must be a ${field === 'topic' || field === 'devig' ? 'string' : 'number'}`, id, field);
  }
  if (m.filter !== undefined && m.filter !== null) {
    if (typeof m.filter !== 'object' || Array.isArray(m.filter)) throw new StreamRequestError('filter must be an object', id, 'filter');
    for (const [field, value] of Object.entries(m.filter as Record<string, unknown>)) {
      const param = FILTER_PARAM[field];
      if (param === undefined) throw new StreamRequestError(`unknown filter field ${field}; the filters are ${Object.keys(FILTER_PARAM).join(', ')}`, id, `filter.${field}`);
      const text = filterText(value, field, id, Infinity);
      if (text !== '') query.push(`${param}=${encodeURIComponent(text)}`);
    }
  }
  let values: SignalStreamQuery;
  try {
    values = parser.parse(query.join('&')).values as unknown as SignalStreamQuery;
  } catch (error) {
    if (error instanceof HttpError) throw new StreamRequestError(fieldNames(error.detail), id, error.param === null ? null : (PARAM_FIELD[error.param] ?? error.param));
    throw error;
  }
  const format = m.format ?? 'json';
  if (typeof format !== 'string' || !WIRE_FORMATS.includes(format as WireFormat)) throw new StreamRequestError(`format must be one of ${WIRE_FORMATS.join(', ')}`, id, 'format');
  return { id, query: values, format: format as WireFormat };
}

/** The parser's sentence with each parameter named as the message's field (min_ev -> minEv). */
function fieldNames(detail: string): string {
  return detail.replace(/\b(min_ev|max_hold|min_width|max_cost|min_points|min_cents|heartbeat_ms|event_id)\b/g, (param) => PARAM_FIELD[param] ?? param);
}
