// GET /api/v1/stream/signals: the trader screens as Server-Sent Events, one topic per
// connection (topic=steam | fair_line | best_price | ev | middle) with the filters of
// the topic's route (engine/stream/signalTopics.ts says what each message carries).
// A client that leaves more than SIGNAL_STREAM_BUFFER_BYTES unread is told
// slow_consumer and disconnected: nothing is skipped silently.
import { SIGNAL_TOPICS, type SignalTopics, type TopicQuery } from '../../engine/stream/signalTopics.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { AnonymousConnections } from './stream.ts';
import type { StreamResult } from '../request.ts';
import type { ParamDef, QueryOf } from '../schemas.ts';
import { EVENT_ID } from './oddsParams.ts';
import { BASE_URL, curlExample, KEY_HEADER, KEY_RULES } from './routeDocs.ts';
import { LEAGUE, MAX_COST, MAX_HOLD, MIN_CENTS, MIN_EV, MIN_POINTS, MIN_WIDTH, SCREEN_DEVIG, SPORTSBOOK } from './screens.ts';

export const SIGNAL_STREAM_PATH = '/api/v1/stream/signals';
/** Unread bytes past which a client is disconnected. */
const SIGNAL_STREAM_BUFFER_BYTES = 8 * 1024 * 1024;

const TOPIC = {
  name: 'topic',
  kind: 'enum',
  values: SIGNAL_TOPICS,
  required: true,
  description: 'steam (each move as it is seen), fair_line, best_price, ev or middle (at most once a second, when markets changed: the market groups re-read and their current records, at most 64 groups a message).',
} as const satisfies ParamDef;

const HEARTBEAT = { name: 'heartbeat_ms', kind: 'integer', minimum: 500, maximum: 30_000, default: 15_000, description: 'A comment line after this long without other traffic (500..30000, default 15000).' } as const satisfies ParamDef;

const SIGNAL_STREAM_QUERY = [TOPIC, LEAGUE, EVENT_ID, SPORTSBOOK, SCREEN_DEVIG, MIN_EV, MAX_HOLD, MIN_WIDTH, MAX_COST, MIN_POINTS, MIN_CENTS, HEARTBEAT] as const;

function topicQuery(q: QueryOf<typeof SIGNAL_STREAM_QUERY>, now: number): TopicQuery {
  const filter = { leagues: q.league ?? null, eventIds: q.event_id ?? null };
  switch (q.topic) {
    case 'steam': return { topic: 'steam', query: { ...filter, sportsbooks: q.sportsbook ?? null, minPoints: q.min_points, minCents: q.min_cents, since: now } };
    case 'fair_line': return { topic: 'fair_line', query: { ...filter, devig: q.devig } };
    case 'best_price': return { topic: 'best_price', query: { ...filter, maxHold: q.max_hold } };
    case 'ev': return { topic: 'ev', query: { ...filter, devig: q.devig, minEv: q.min_ev, sportsbooks: q.sportsbook ?? null } };
    case 'middle': return { topic: 'middle', query: { ...filter, minWidth: q.min_width, maxCost: q.max_cost } };
  }
}

const SLOW = Buffer.from('event: status\ndata: {"code":"slow_consumer"}\n\n');
const HEARTBEAT_LINE = Buffer.from(': heartbeat\n\n');

/** `anonymous`: the push stream's count of keyless connections per address (http/routes/stream.ts), which these streams share. */
export function signalStreamRoute(topics: SignalTopics, anonymous: AnonymousConnections): AnyRoute {
  return defineRoute({
    path: SIGNAL_STREAM_PATH,
    auth: 'key',
    keyParam: true,
    peerAddress: true,
    query: SIGNAL_STREAM_QUERY,
    response: 'SignalStreamMessage',
    responseKind: 'event-stream',
    summary: 'The trader screens as Server-Sent Events: steam moves as they happen, fair lines, best prices, +EV and middles as they change.',
    description:
      'One topic per connection, with the filters of its route (/steam, /fair-lines, /best-prices, /ev, /middles; parameters a topic does not use are ignored). steam: `event: steam`, data {topic, move} for each move from the subscription on. Group topics: `event: <topic>`, data {topic, groups, records} at most once a second, when markets passing the filter changed, where groups are the market group ids re-read and records their current records (a group listed without records has none now); for middle, records are the middles of the listed groups\' families (the same market at other lines). A message lists at most 64 groups: more changed groups come as several messages, back to back, each complete for its groups (steam events may come between them). ' +
      `A client more than 8 MiB behind gets \`event: status\` slow_consumer and is disconnected. ${KEY_RULES} A browser's EventSource cannot set headers: pass the key as the key parameter.` +
      curlExample('# -N: print events as they arrive; --max-time ends the example after 3 s', `curl -sN --max-time 3 ${KEY_HEADER} '${BASE_URL}/api/v1/stream/signals?topic=best_price&max_hold=0.03&heartbeat_ms=1000'`),
    handle(req): StreamResult {
      const request = topicQuery(req.query, req.now);
      const heartbeatMs = req.query.heartbeat_ms;
      // counted with the address's push-stream connections (STREAM_MAX_ANONYMOUS_CONNECTIONS): 429 before it opens
      const address = req.apiKey === null ? (req.remoteAddress ?? '') : '';
      anonymous.check(address);
      return {
        kind: 'stream',
        contentType: 'text/event-stream; charset=utf-8',
        open(stream) {
          let closed = false;
          let quietSince = Date.now();
          const release = anonymous.hold(address);
          const end = () => {
            if (closed) return;
            closed = true;
            release();
            clearInterval(timer);
            unsubscribe();
          };
          const unsubscribe = topics.subscribe(request, {
            send(topic, bytes) {
              if (closed) return false;
              if (stream.bufferedAmount() > SIGNAL_STREAM_BUFFER_BYTES) {
                stream.write(SLOW);
                end();
                stream.end();
                return false;
              }
              stream.write(Buffer.concat([Buffer.from(`event: ${topic}\ndata: `), bytes, Buffer.from('\n\n')]));
              quietSince = Date.now();
              return true;
            },
          });
          const timer = setInterval(() => {
            if (closed || Date.now() - quietSince < heartbeatMs) return;
            stream.write(HEARTBEAT_LINE);
            quietSince = Date.now();
          }, Math.min(heartbeatMs, 1000));
          timer.unref();
          stream.write(Buffer.from(': signal stream\nretry: 1000\n\n'));
          return { drained: () => {}, closed: end };
        },
      };
    },
  });
}

/** The OpenAPI schema of the stream's messages (passed to the document beside the odds stream's). */
export const SIGNAL_STREAM_SCHEMAS: Record<string, unknown> = {
  SignalStreamMessage: {
    description: 'One event of /api/v1/stream/signals (the data line, as JSON).',
    oneOf: [
      { type: 'object', required: ['topic', 'move'], properties: { topic: { const: 'steam' }, move: { $ref: '#/components/schemas/SteamMove' } } },
      { type: 'object', required: ['topic', 'groups', 'records'], properties: { topic: { const: 'fair_line' }, groups: { type: 'array', items: { type: 'string' } }, records: { type: 'array', items: { $ref: '#/components/schemas/FairLine' } } } },
      { type: 'object', required: ['topic', 'groups', 'records'], properties: { topic: { const: 'best_price' }, groups: { type: 'array', items: { type: 'string' } }, records: { type: 'array', items: { $ref: '#/components/schemas/BestPrice' } } } },
      { type: 'object', required: ['topic', 'groups', 'records'], properties: { topic: { const: 'ev' }, groups: { type: 'array', items: { type: 'string' } }, records: { type: 'array', items: { $ref: '#/components/schemas/PositiveEv' } } } },
      { type: 'object', required: ['topic', 'groups', 'records'], properties: { topic: { const: 'middle' }, groups: { type: 'array', items: { type: 'string' } }, records: { type: 'array', items: { $ref: '#/components/schemas/Middle' } } } },
    ],
  },
};
