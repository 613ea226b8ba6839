// The AsyncAPI 3.0 document of the push stream (served at /api/v1/asyncapi.json): the
// WebSocket channel with its client and server messages, and the SSE channel with the
// server messages; the same for the signal stream (the trader screens, whose records
// are the OpenAPI description's FairLine, BestPrice, PositiveEv, Middle and SteamMove,
// copied here as they are). The odds row is the OpenAPI description's OddsRow (the same bytes
// /odds serves), copied without its 2019-09 keywords (dependentRequired,
// dependentSchemas), which AsyncAPI's default schema format does not have; the OpenAPI
// description remains the full statement of the row.
import { COMPONENT_SCHEMAS } from './openapiSchemas.ts';
import { ODDS_FORMATS } from '../engine/rowJson.ts';
import { defineRoute, type AnyRoute } from './router.ts';
import type { DocumentResult } from './request.ts';
import { SEGMENT_ROWS } from '../engine/stream/streamHub.ts';
import { CONFLATE_MS, HEARTBEAT_MS } from './routes/streamParams.ts';
import { SIGNAL_HEARTBEAT_MS } from './routes/signalParams.ts';
import { MESSAGE_GROUPS, SIGNAL_TOPICS } from '../engine/stream/signalTopics.ts';
import { DEVIG_METHODS } from '../engine/signals/devig.ts';
import { BASE_URL, curlExample } from './routes/routeDocs.ts';

export const ASYNCAPI_PATH = '/api/v1/asyncapi.json';

const STATUS_CODES = ['invalid_subscription', 'too_many_subscriptions', 'slow_consumer', 'resync', 'invalid_api_key', 'missing_api_key', 'rate_limited'];

const stringList = (description: string, maxItems = 20) => ({ type: 'array', maxItems, items: { type: 'string' }, description });

function oddsRowSchema(): Record<string, unknown> {
  const { dependentRequired: _required, dependentSchemas: _schemas, ...row } = COMPONENT_SCHEMAS.OddsRow as Record<string, unknown>;
  return row;
}

/** The screen records and the schemas they refer to, as the OpenAPI description has them. */
const SCREEN_RECORD_SCHEMAS = ['FairLine', 'FairOutcome', 'WeightedBook', 'BestPrice', 'BestOutcome', 'PositiveEv', 'Middle', 'MiddleLeg', 'SteamMove', 'StaleBook'];

const numberIn = (name: string, range: string) => ({ type: 'number', description: `As ${name} on the topic's route (${range}).` });

const schemas: Record<string, unknown> = {
  OddsRow: oddsRowSchema(),
  Clk: {
    type: 'string',
    description:
      'A clock token: the board sequence a message brings the client to, with the board it came from. Opaque: compare for equality, send back to resume. A token from another board, or older than the service can answer, gets a resync.',
  },
  Filter: {
    type: 'object',
    additionalProperties: false,
    description: 'The /odds filters (same meanings and limits); absent or empty means all.',
    properties: {
      league: stringList('League codes, any-of, case-insensitive.'),
      sportsbook: stringList('Source ids, any-of, case-insensitive.'),
      market: stringList('Tokens, each a case-insensitive substring of market or marketSubtype, any-of.'),
      eventId: stringList('Event ids, exact, any-of.'),
      playerId: stringList('One resolved player id (as player_id on /odds).', 1),
    },
  },
  Subscribe: {
    type: 'object',
    required: ['op', 'id'],
    additionalProperties: false,
    properties: {
      op: { const: 'subscribe' },
      id: { type: 'string', minLength: 1, maxLength: 64, description: 'Names the subscription on this connection; echoed in its messages.' },
      filter: { $ref: '#/components/schemas/Filter' },
      clk: { $ref: '#/components/schemas/Clk' },
      heartbeatMs: { type: 'integer', minimum: HEARTBEAT_MS.min, maximum: HEARTBEAT_MS.max, default: HEARTBEAT_MS.default },
      conflateMs: { type: 'integer', minimum: CONFLATE_MS.min, maximum: CONFLATE_MS.max, default: CONFLATE_MS.default, description: '0: a delta per applied change batch; otherwise at most one delta per interval, each row at its latest state.' },
      format: { type: 'string', enum: ['json', 'msgpack'], default: 'json', description: 'json: text frames; msgpack: binary frames, one map per message.' },
      oddsFormat: { type: 'string', enum: [...ODDS_FORMATS], default: 'all', description: 'As odds_format on /odds.' },
    },
  },
  Unsubscribe: { type: 'object', required: ['op', 'id'], additionalProperties: false, properties: { op: { const: 'unsubscribe' }, id: { type: 'string' } } },
  ClientHeartbeat: { type: 'object', required: ['op'], additionalProperties: false, properties: { op: { const: 'heartbeat' } } },
  Image: {
    type: 'object',
    required: ['op', 'id', 'clk', 'segment', 'rows'],
    properties: {
      op: { const: 'image' },
      id: { type: 'string' },
      clk: { $ref: '#/components/schemas/Clk' },
      segment: { type: 'string', enum: ['start', 'more', 'end'], description: `At most ${SEGMENT_ROWS} rows each; the last is end (a one-segment image too). Apply the image once end arrived.` },
      resync: { const: true, description: 'The subscribe carried a clk that cannot be resumed: replace the held rows.' },
      rows: { type: 'array', maxItems: SEGMENT_ROWS, items: { $ref: '#/components/schemas/OddsRow' }, description: 'The rows /odds with the same filter serves at clk, in its order. Segments are built one at a time (other subscriptions\' messages may come between them), so a row of a later segment may already be newer than clk; every change after clk follows as deltas, so image + deltas is exact.' },
    },
  },
  Delta: {
    type: 'object',
    required: ['op', 'id', 'clk', 'prev', 'rows'],
    properties: {
      op: { const: 'delta' },
      id: { type: 'string' },
      clk: { $ref: '#/components/schemas/Clk' },
      prev: { allOf: [{ $ref: '#/components/schemas/Clk' }], description: 'The clk of this subscription\'s previous image or delta: equal to the last one applied, or something was missed.' },
      rows: { type: 'array', items: { $ref: '#/components/schemas/OddsRow' }, description: 'Rows changed since the previous message, latest state each, in change order; removed: true is a tombstone (delete by id).' },
    },
  },
  Heartbeat: {
    type: 'object',
    required: ['op', 'clk'],
    properties: { op: { const: 'heartbeat' }, clk: { allOf: [{ $ref: '#/components/schemas/Clk' }], description: 'The board\'s current clk; a heartbeat leaves the prev chain alone.' } },
  },
  Status: {
    type: 'object',
    required: ['op', 'code', 'detail'],
    properties: {
      op: { const: 'status' },
      id: { type: 'string', description: 'The subscription concerned, when there is one.' },
      code: { type: 'string', enum: STATUS_CODES },
      detail: { type: 'string' },
      param: { type: 'string', description: 'The offending field (e.g. filter.league), for invalid_subscription.' },
    },
  },
  SignalFilter: {
    type: 'object',
    additionalProperties: false,
    description: 'The filters of the topic\'s route (same meanings and limits); absent or empty means all. sportsbook applies to steam and ev.',
    properties: {
      league: stringList('League codes, any-of, case-insensitive.'),
      eventId: stringList('Event ids, exact, any-of.'),
      sportsbook: stringList('Sportsbook ids, any-of, case-insensitive (steam: the sharp book that moved; ev: the book priced).'),
    },
  },
  SignalSubscribe: {
    type: 'object',
    required: ['op', 'id', 'topic'],
    additionalProperties: false,
    description: 'Opens a subscription to one topic with the filters of its route (parameters a topic does not use are ignored), as the query of GET /api/v1/stream/signals with camelCase names.',
    properties: {
      op: { const: 'subscribe' },
      id: { type: 'string', minLength: 1, maxLength: 64, description: 'Names the subscription on this connection; echoed in its messages.' },
      topic: { type: 'string', enum: [...SIGNAL_TOPICS] },
      filter: { $ref: '#/components/schemas/SignalFilter' },
      devig: { type: 'string', enum: [...DEVIG_METHODS], default: 'multiplicative', description: 'fair_line and ev: as devig on /fair-lines.' },
      minEv: { ...numberIn('min_ev', '-1..10, default 0.01'), minimum: -1, maximum: 10, default: 0.01 },
      maxHold: { ...numberIn('max_hold on /best-prices', '-1..1, default 1'), minimum: -1, maximum: 1, default: 1 },
      minWidth: { ...numberIn('min_width on /middles', '0..100, default 0'), minimum: 0, maximum: 100, default: 0 },
      maxCost: { ...numberIn('max_cost on /middles', '-1..1, default 0.05'), minimum: -1, maximum: 1, default: 0.05 },
      minPoints: { ...numberIn('min_points on /steam', '0..100, default 0'), minimum: 0, maximum: 100, default: 0 },
      minCents: { ...numberIn('min_cents on /steam', '0..100000, default 0'), minimum: 0, maximum: 100000, default: 0 },
      heartbeatMs: { type: 'integer', minimum: SIGNAL_HEARTBEAT_MS.min, maximum: SIGNAL_HEARTBEAT_MS.max, default: SIGNAL_HEARTBEAT_MS.default, description: 'A heartbeat after this long without other traffic on the connection (the shortest of its subscriptions).' },
      format: { type: 'string', enum: ['json', 'msgpack'], default: 'json', description: 'json: text frames; msgpack: binary frames, one map per message.' },
    },
  },
  SignalSubscribed: {
    type: 'object',
    required: ['op', 'id', 'topic'],
    description: 'The subscription is open: steam moves seen from now on follow; a group topic\'s first push (within a second) is the full image of every market passing its filter.',
    properties: { op: { const: 'subscribed' }, id: { type: 'string' }, topic: { type: 'string', enum: [...SIGNAL_TOPICS] } },
  },
  Signal: {
    type: 'object',
    required: ['op', 'id', 'topic'],
    description: 'One message of a subscription: the data of the SSE stream\'s event, with op and the subscription\'s id in front. steam: move. Group topics: groups and records.',
    properties: {
      op: { const: 'signal' },
      id: { type: 'string', description: 'The subscription.' },
      topic: { type: 'string', enum: [...SIGNAL_TOPICS] },
      move: { allOf: [{ $ref: '#/components/schemas/SteamMove' }], description: 'steam: the move, as /steam lists it.' },
      groups: { type: 'array', maxItems: MESSAGE_GROUPS, items: { type: 'string' }, description: `Group topics: the market group ids whose records changed for this subscription since it was last sent them (at most ${MESSAGE_GROUPS}; a push of more comes as several messages). Replace what you hold for them (middle: for their families); a group listed without records has none now.` },
      records: {
        type: 'array',
        description: 'Group topics: the listed groups\' current records passing the filter, as the topic\'s route serves them (fair_line: FairLine, best_price: BestPrice, ev: PositiveEv, middle: Middle).',
        items: { oneOf: [{ $ref: '#/components/schemas/FairLine' }, { $ref: '#/components/schemas/BestPrice' }, { $ref: '#/components/schemas/PositiveEv' }, { $ref: '#/components/schemas/Middle' }] },
      },
    },
  },
  SignalEvent: {
    type: 'object',
    required: ['topic'],
    description: 'The data line of an SSE event of /api/v1/stream/signals (event: the topic): the Signal message without op and id.',
    properties: {
      topic: { type: 'string', enum: [...SIGNAL_TOPICS] },
      move: { allOf: [{ $ref: '#/components/schemas/SteamMove' }], description: 'steam: the move.' },
      groups: { type: 'array', maxItems: MESSAGE_GROUPS, items: { type: 'string' }, description: 'Group topics: the market groups whose records changed.' },
      records: { type: 'array', items: { oneOf: [{ $ref: '#/components/schemas/FairLine' }, { $ref: '#/components/schemas/BestPrice' }, { $ref: '#/components/schemas/PositiveEv' }, { $ref: '#/components/schemas/Middle' }] }, description: 'Group topics: their current records.' },
    },
  },
  SignalHeartbeat: {
    type: 'object',
    required: ['op'],
    description: 'After the subscriptions\' shortest heartbeatMs without other traffic, and in answer to a client heartbeat.',
    properties: { op: { const: 'heartbeat' } },
  },
  ...Object.fromEntries(SCREEN_RECORD_SCHEMAS.map((name) => [name, COMPONENT_SCHEMAS[name]])),
};

const message = (name: string, title: string, summary: string, contentType = 'application/json') => ({
  name,
  title,
  summary,
  contentType,
  payload: { $ref: `#/components/schemas/${name}` },
});

const messages = {
  subscribe: message('Subscribe', 'Subscribe', 'Opens a subscription: an image follows, or only the changes after clk when it can be resumed.'),
  unsubscribe: message('Unsubscribe', 'Unsubscribe', 'Closes a subscription.'),
  clientHeartbeat: message('ClientHeartbeat', 'Heartbeat request', 'Asks for a heartbeat at once.'),
  image: message('Image', 'Image', 'The subscription\'s rows at one board sequence, in segments.'),
  delta: message('Delta', 'Delta', 'Rows changed since the previous message of the subscription.'),
  heartbeat: message('Heartbeat', 'Heartbeat', 'Sent after heartbeatMs without other traffic.'),
  status: message('Status', 'Status', 'An error or notice: invalid_subscription, too_many_subscriptions (past STREAM_MAX_SUBSCRIPTIONS on the connection; nothing opened), slow_consumer (then the connection closes), resync (a fresh image follows), key errors.'),
};

const signalMessages = {
  subscribe: message('SignalSubscribe', 'Subscribe to a signal topic', 'Opens a subscription: subscribed, then its messages.'),
  unsubscribe: messages.unsubscribe,
  clientHeartbeat: messages.clientHeartbeat,
  subscribed: message('SignalSubscribed', 'Subscribed', 'The subscription is open.'),
  signal: message('Signal', 'Signal', 'A steam move, or a group topic\'s changed market groups and their records.'),
  heartbeat: message('SignalHeartbeat', 'Signal stream heartbeat', 'Sent after heartbeatMs without other traffic.'),
  status: messages.status,
};

const SIGNAL_DESCRIPTION =
  'The signal stream (docs/signals.md): the trader screens of /fair-lines, /best-prices, /ev, /middles and /steam, pushed as they change. steam: each move as the apply that made it returns. fair_line, best_price, ev, middle: at most once a second, the market groups whose records for the subscription changed since it was last sent them, and their current records; its first push is the full image. Over the WebSocket, many subscriptions per connection (each counted as a request against the key), JSON or MessagePack; over SSE one topic per connection. The limits are the push stream\'s: STREAM_MAX_SUBSCRIPTIONS per connection (status too_many_subscriptions), STREAM_BUFFER_BYTES unread (status slow_consumer, then close 1008), STREAM_MAX_ANONYMOUS_CONNECTIONS keyless connections per address counted with the odds stream\'s (429 too_many_connections).';

const DESCRIPTION = [
  'Push delivery of the odds board: a subscription gets an image of its rows (exactly what /odds serves with the same filter at that moment), then deltas.',
  'Gap checking: every image and delta carries clk, the board sequence it brings the client to, and every delta carries prev, the clk of the subscription\'s previous message. A client that applies a delta whose prev is not the clk it holds has missed something and resubscribes with its clk.',
  'Resume: a subscribe with the clk of the last image end or delta applied gets only the rows changed after it, for as long as the service holds the changes: at least the delta feed\'s 10 minutes (with a tick archive, ARCHIVE_DIR, up to REPLAY_WINDOW_HOURS, default 24, answered from it), across restarts of a service that keeps its data directory (SIGTERM or SIGKILL), and on any node of the same replicated stream (a clk ahead of a lagging replica waits up to STREAM_RESUME_WAIT_MS, default 5 s, for it to catch up). Otherwise a status resync and a fresh image marked resync: never a silent gap. Over SSE the clk is the event id and Last-Event-ID resumes.',
  'Conflation and slow clients: conflateMs > 0 sends at most one delta per interval with each row\'s latest state. A client whose socket pushes back gets at most one such delta per second until it reads; if its queued bytes still pass the service\'s cap (STREAM_BUFFER_BYTES, default 8 MiB), it gets status slow_consumer and the connection closes (code 1008). Images count against the same cap: a segment is sent only once the socket has written what it queued before (an image goes at the pace its reader reads), and a subscribe or heartbeat request arriving while the queue is past the cap drops the connection the same way.',
  'Keys: X-Api-Key or Authorization: Bearer on the handshake, or the key query parameter (browsers cannot set headers on a WebSocket or EventSource); an invalid key is refused with 401 as on the HTTP routes. Each subscription counts as one request. Limits: at most STREAM_MAX_SUBSCRIPTIONS (default 100) open subscriptions per connection (past it: status too_many_subscriptions), and at most STREAM_MAX_ANONYMOUS_CONNECTIONS (default 32) WebSocket connections without a key per client address (past it the handshake answers 429 too_many_connections).',
].join('\n\n');

export function buildAsyncApi(): Record<string, unknown> {
  return {
    asyncapi: '3.0.0',
    info: { title: 'Sports odds push stream', version: '1.0.0', description: DESCRIPTION },
    defaultContentType: 'application/json',
    servers: {
      service: { host: 'localhost:8080', protocol: 'ws', description: 'The odds service itself (the same host and port as the HTTP API).', security: [{ $ref: '#/components/securitySchemes/apiKeyHeader' }, { $ref: '#/components/securitySchemes/apiKeyQuery' }] },
      serviceSse: { host: 'localhost:8080', protocol: 'http', description: 'The same service, Server-Sent Events.', security: [{ $ref: '#/components/securitySchemes/apiKeyHeader' }, { $ref: '#/components/securitySchemes/apiKeyQuery' }] },
    },
    channels: {
      stream: {
        address: '/api/v1/stream',
        title: 'WebSocket stream',
        description: 'One JSON object per text frame (or one MessagePack map per binary frame with format msgpack), many subscriptions per connection.',
        servers: [{ $ref: '#/servers/service' }],
        messages,
      },
      sse: {
        address: '/api/v1/stream/sse',
        title: 'Server-Sent Events stream',
        description: 'One subscription; its filter, clk, heartbeat_ms, conflate_ms and odds_format are query parameters. event: image|delta|heartbeat|status; id: the clk of an image end or delta.',
        servers: [{ $ref: '#/servers/serviceSse' }],
        messages: { image: messages.image, delta: messages.delta, heartbeat: messages.heartbeat, status: messages.status },
      },
      signals: {
        address: '/api/v1/stream/signals/ws',
        title: 'Signal stream, WebSocket',
        description: `${SIGNAL_DESCRIPTION} One JSON object per text frame (or one MessagePack map per binary frame with format msgpack).`,
        servers: [{ $ref: '#/servers/service' }],
        messages: signalMessages,
      },
      signalsSse: {
        address: '/api/v1/stream/signals',
        title: 'Signal stream, Server-Sent Events',
        description: `${SIGNAL_DESCRIPTION} One topic per connection; its filters are query parameters (topic, league, event_id, sportsbook, devig, min_ev, max_hold, min_width, max_cost, min_points, min_cents, heartbeat_ms). event: the topic; data: the message; a comment line as heartbeat; event: status with slow_consumer before a disconnect.`,
        servers: [{ $ref: '#/servers/serviceSse' }],
        messages: { signal: message('SignalEvent', 'Signal event', 'One event: a steam move, or changed market groups and their records.') },
      },
    },
    operations: {
      subscribe: { action: 'receive', channel: { $ref: '#/channels/stream' }, summary: 'The service receives subscribe, unsubscribe and heartbeat requests.', messages: [{ $ref: '#/channels/stream/messages/subscribe' }, { $ref: '#/channels/stream/messages/unsubscribe' }, { $ref: '#/channels/stream/messages/clientHeartbeat' }] },
      push: { action: 'send', channel: { $ref: '#/channels/stream' }, summary: 'The service sends images, deltas, heartbeats and statuses.', messages: [{ $ref: '#/channels/stream/messages/image' }, { $ref: '#/channels/stream/messages/delta' }, { $ref: '#/channels/stream/messages/heartbeat' }, { $ref: '#/channels/stream/messages/status' }] },
      pushSse: { action: 'send', channel: { $ref: '#/channels/sse' }, summary: 'The same server messages as Server-Sent Events.', messages: [{ $ref: '#/channels/sse/messages/image' }, { $ref: '#/channels/sse/messages/delta' }, { $ref: '#/channels/sse/messages/heartbeat' }, { $ref: '#/channels/sse/messages/status' }] },
      subscribeSignals: { action: 'receive', channel: { $ref: '#/channels/signals' }, summary: 'The service receives signal subscribe, unsubscribe and heartbeat requests.', messages: [{ $ref: '#/channels/signals/messages/subscribe' }, { $ref: '#/channels/signals/messages/unsubscribe' }, { $ref: '#/channels/signals/messages/clientHeartbeat' }] },
      pushSignals: { action: 'send', channel: { $ref: '#/channels/signals' }, summary: 'The service sends subscribed, signal, heartbeat and status messages.', messages: [{ $ref: '#/channels/signals/messages/subscribed' }, { $ref: '#/channels/signals/messages/signal' }, { $ref: '#/channels/signals/messages/heartbeat' }, { $ref: '#/channels/signals/messages/status' }] },
      pushSignalsSse: { action: 'send', channel: { $ref: '#/channels/signalsSse' }, summary: 'The signal stream\'s events as Server-Sent Events.', messages: [{ $ref: '#/channels/signalsSse/messages/signal' }] },
    },
    components: {
      schemas,
      securitySchemes: {
        apiKeyHeader: { type: 'httpApiKey', name: 'X-Api-Key', in: 'header', description: 'Or Authorization: Bearer <key>.' },
        apiKeyQuery: { type: 'httpApiKey', name: 'key', in: 'query', description: 'For browsers.' },
      },
    },
  };
}

export function asyncApiRoute(): AnyRoute {
  const body = Buffer.from(JSON.stringify(buildAsyncApi()));
  return defineRoute({
    path: ASYNCAPI_PATH,
    auth: 'none',
    query: [],
    response: 'AsyncApiDocument',
    responseKind: 'document',
    summary: 'The AsyncAPI 3.0 description of the push stream (/api/v1/stream and /api/v1/stream/sse) and the signal stream (/api/v1/stream/signals/ws and /api/v1/stream/signals).',
    description:
      'Channels, operations and messages of the WebSocket stream and its Server-Sent Events form; /docs/stream renders it. No key needed. Built once at start-up, so its ETag holds for the life of the process.' +
      curlExample(`curl -s '${BASE_URL}/api/v1/asyncapi.json' | jq '.channels | keys'`),
    cache: { validity: () => 0, capacity: 4 },
    handle: (): DocumentResult => ({ kind: 'document', body }),
  });
}

/** OpenAPI component schemas the stream routes refer to. */
export const STREAM_OPENAPI_SCHEMAS: Record<string, unknown> = {
  AsyncApiDocument: { type: 'object', required: ['asyncapi', 'info', 'channels'], description: 'The AsyncAPI 3.0 document of the push stream.' },
  StreamMessage: {
    type: 'object',
    required: ['op'],
    description: 'A stream message (image, delta, heartbeat or status) as described in /api/v1/asyncapi.json; its rows are OddsRow.',
    properties: { op: { type: 'string', enum: ['image', 'delta', 'heartbeat', 'status'] }, rows: { type: 'array', items: { $ref: '#/components/schemas/OddsRow' } } },
  },
};
