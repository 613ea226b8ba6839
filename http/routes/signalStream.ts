// GET /api/v1/stream/signals: the trader screens as Server-Sent Events, one topic per
// connection (topic=steam | fair_line | best_price | ev | middle) with the filters of
// the topic's route (engine/stream/signalTopics.ts says what each message carries).
// The same topics, filters and messages over a WebSocket, many subscriptions per
// connection: http/routes/signalSocket.ts. Both count with the push stream's keyless
// connections per address, and a client that leaves more than STREAM_BUFFER_BYTES
// unread is told slow_consumer and disconnected: nothing is skipped silently.
import { defineRoute, type AnyRoute } from '../router.ts';
import type { AnySocketRoute } from '../socketRoute.ts';
import type { StreamResult } from '../request.ts';
import { BASE_URL, curlExample, KEY_HEADER, KEY_RULES } from './routeDocs.ts';
import { SIGNAL_STREAM_QUERY, topicQuery } from './signalParams.ts';
import { SIGNAL_SOCKET_PATH, signalSocketRoute, type SignalStreamSettings } from './signalSocket.ts';

export type { SignalStreamSettings } from './signalSocket.ts';

export const SIGNAL_STREAM_PATH = '/api/v1/stream/signals';

/** The signal stream's routes for the composition root: the SSE route and the WebSocket endpoint. */
export function buildSignalStream(settings: SignalStreamSettings): { routes: AnyRoute[]; sockets: AnySocketRoute[] } {
  return { routes: [signalStreamRoute(settings)], sockets: [signalSocketRoute(settings)] };
}

const SLOW = Buffer.from('event: status\ndata: {"code":"slow_consumer"}\n\n');
const HEARTBEAT_LINE = Buffer.from(': heartbeat\n\n');

export function signalStreamRoute(settings: Pick<SignalStreamSettings, 'topics' | 'anonymous' | 'bufferCapBytes'>): AnyRoute {
  const { topics, anonymous, bufferCapBytes } = settings;
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
      `The same topics and filters, many per connection, JSON or MessagePack: the WebSocket at ${SIGNAL_SOCKET_PATH} (described in /api/v1/asyncapi.json). A client more than STREAM_BUFFER_BYTES (default 8 MiB) behind gets \`event: status\` slow_consumer and is disconnected. Without a key, one client address holds at most STREAM_MAX_ANONYMOUS_CONNECTIONS push-stream connections (this stream's included); past it 429 too_many_connections. ${KEY_RULES} A browser's EventSource cannot set headers: pass the key as the key parameter.` +
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
              if (stream.bufferedAmount() > bufferCapBytes) {
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
