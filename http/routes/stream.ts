// The push stream's two doors onto the stream hub (engine/stream/streamHub.ts):
// GET /api/v1/stream upgrades to a WebSocket (client messages subscribe, unsubscribe,
// heartbeat), GET /api/v1/stream/sse is Server-Sent Events for one subscription whose
// filter is the query string, resuming from Last-Event-ID. Keys are read as on every
// route (X-Api-Key, Bearer, or the `key` parameter for browsers); each subscription is
// counted as one request against the key (the SSE request is its subscription).
// The messages are described in the AsyncAPI document (http/asyncapi.ts).
import type { Authenticator } from '../auth.ts';
import type { Clock } from '../../engine/clock.ts';
import type { ReplaySource } from '../../engine/archivedTombstones.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import { ClockTokens } from '../../engine/stream/streamClock.ts';
import { StreamHub } from '../../engine/stream/streamHub.ts';
import type { StreamClient } from '../../engine/stream/streamClient.ts';
import type { SinkResult, StreamSink, SubscribeRequest } from '../../engine/stream/streamSink.ts';
import { asyncApiRoute } from '../asyncapi.ts';
import type { OutgoingMessage } from '../../engine/stream/streamMessages.ts';
import { AnonymousConnections } from './anonymousConnections.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { AnySocketRoute, SocketConnection } from '../socketRoute.ts';
import type { StreamResult } from '../request.ts';
import { parseClientMessage, SSE_QUERY, sseRequest } from './streamParams.ts';
import { subscriptionSocketRoute, type SubscriptionSocketData } from './subscriptionSocket.ts';
import { ACTIVE_EVENT, BASE_URL, curlExample, KEY_HEADER, KEY_RULES } from './routeDocs.ts';

export const STREAM_PATH = '/api/v1/stream';
export const SSE_PATH = '/api/v1/stream/sse';

/** Largest client message: a subscribe with every filter at its limit fits many times over. */
export const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024;
/**
 * What the transport queues before it would drop a message: only an image (sent whole,
 * up to the whole board) comes near it; deltas stop at the hub's buffer cap.
 */
export const MAX_QUEUED_BYTES = 1 << 30;

export interface StreamRouteOptions {
  hub: StreamHub;
  /** Push-stream connections without an API key per address, WebSocket and SSE together (STREAM_MAX_ANONYMOUS_CONNECTIONS). */
  anonymous: AnonymousConnections;
  /** Counts each subscription against its key, as a request. */
  authenticator: Authenticator;
  clock: Clock;
}

type SocketData = SubscriptionSocketData<StreamClient>;

export function streamSocketRoute(options: StreamRouteOptions): AnySocketRoute {
  const { hub, authenticator, clock, anonymous } = options;
  return subscriptionSocketRoute<SubscribeRequest, StreamClient>({
    path: STREAM_PATH,
    maxPayloadBytes: MAX_CLIENT_MESSAGE_BYTES,
    maxBackpressureBytes: MAX_QUEUED_BYTES,
    anonymous,
    authenticator,
    clock,
    parse: parseClientMessage,
    connect: (ws) => hub.connect(socketSink(ws)),
  });
}

/**
 * A WebSocket as the hub's sink: a class with the connection as a field rather than
 * closures, so that the send the hub makes per subscriber per batch goes through one
 * object fewer (the closures' shared context) on its way to the socket.
 */
class SocketSink implements StreamSink {
  constructor(private readonly ws: SocketConnection<SocketData>) {}

  send(message: OutgoingMessage): SinkResult {
    return this.ws.send(message.bytes, message.binary);
  }

  bufferedAmount(): number {
    return this.ws.getBufferedAmount();
  }

  close(reason: 'slow_consumer'): void {
    this.ws.end(1008, reason);
  }

  cork(sends: () => void): void {
    this.ws.cork(sends);
  }
}

function socketSink(ws: SocketConnection<SocketData>): StreamSink {
  return new SocketSink(ws);
}

const SSE_DESCRIPTION = [
  'Server-Sent Events for one subscription to the push stream; its filter is the query string (the same parameters, meanings and limits as /odds).',
  'Events: `image` (the rows as /odds serves them at the image\'s clk, in segments of at most 1,000 rows built one at a time, so a later segment\'s rows may already be newer, and the deltas that follow bring every row up to date; only the last segment, `"segment": "end"`, carries an id), `delta` (every row of the subscription changed since the previous event, tombstones `"removed": true` included, with `clk` and `prev`), `heartbeat` (after heartbeat_ms without other traffic) and `status` (resync, slow_consumer).',
  'Each image end and delta has `id: <clk>`: a reconnecting EventSource sends it back as Last-Event-ID and gets only the changes after it, for at least the delta feed\'s 10 minutes (with a tick archive, up to REPLAY_WINDOW_HOURS, default 24) and across restarts of a service that keeps its data directory; otherwise a status resync and a fresh image marked `"resync": true`.',
  'The WebSocket stream at /api/v1/stream carries the same messages for many subscriptions per connection (JSON or MessagePack); both are described in the AsyncAPI document at /api/v1/asyncapi.json.',
  `A bad filter answers 400 invalid_parameter before the stream opens. Without a key, one client address holds at most STREAM_MAX_ANONYMOUS_CONNECTIONS (32) push-stream connections, WebSocket and SSE together; past it 429 too_many_connections. ${KEY_RULES} A browser's EventSource cannot set headers: pass the key as the key parameter instead.`,
].join('\n\n') +
  curlExample(
    ACTIVE_EVENT,
    '# -N: print events as they arrive; --max-time ends the example after 3 s',
    `curl -sN --max-time 3 ${KEY_HEADER} "${BASE_URL}/api/v1/stream/sse?event_id=$EVENT&market=moneyline&heartbeat_ms=1000"`,
  );

export function streamSseRoute(options: StreamRouteOptions): AnyRoute {
  const { hub, anonymous } = options;
  return defineRoute({
    path: SSE_PATH,
    auth: 'key',
    keyParam: true,
    peerAddress: true,
    query: SSE_QUERY,
    response: 'StreamMessage',
    responseKind: 'event-stream',
    summary: 'The push stream as Server-Sent Events: an image of the filtered rows, then deltas, resuming from Last-Event-ID.',
    description: SSE_DESCRIPTION,
    handle(req): StreamResult {
      const request = sseRequest(req.query, req.lastEventId ?? null);
      // Counted with the address's WebSocket connections: 429 before the stream opens.
      const address = req.apiKey === null ? (req.remoteAddress ?? '') : '';
      anonymous.check(address);
      return {
        kind: 'stream',
        contentType: 'text/event-stream; charset=utf-8',
        open(stream) {
          let closed = false;
          const release = anonymous.hold(address);
          const client = hub.connect({
            send(message: OutgoingMessage) {
              if (closed) return 'dropped';
              return stream.write(sseEvent(message)) ? 'sent' : 'backpressure';
            },
            bufferedAmount: () => stream.bufferedAmount(),
            close() {
              closed = true;
              stream.end();
            },
          });
          // Browsers reconnect after `retry` ms; the comment line opens the stream at once.
          stream.write(Buffer.from(': odds stream\nretry: 1000\n\n'));
          client.subscribe(request);
          return {
            drained: () => client.drained(),
            closed: () => {
              closed = true;
              release();
              client.disconnected();
            },
          };
        },
      };
    },
  });
}

const DATA = Buffer.from('data: ');
const EVENT_END = Buffer.from('\n\n');

/** event: <op>, id: <clk> on resume points, data: the JSON message (one line); built once per message however many clients it goes to. */
function sseEvent(message: OutgoingMessage): Buffer {
  if (message.sse !== undefined) return message.sse;
  const head = message.resumeClk === null ? `event: ${message.op}\n` : `event: ${message.op}\nid: ${message.resumeClk}\n`;
  message.sse = Buffer.concat([Buffer.from(head), DATA, message.bytes, EVENT_END]);
  return message.sse;
}

export interface StreamSetup {
  hub: StreamHub;
  /** Keyless push-stream connections per address: the WebSocket and SSE streams here and the signal stream share it. */
  anonymous: AnonymousConnections;
  routes: AnyRoute[];
  sockets: AnySocketRoute[];
}

/**
 * The hub and its routes for the composition root. The clk tokens' epoch is the board's
 * history name (OddsEngine.historyId): kept by checkpoints, so a board restored from its
 * data directory, or a replica of the same stream, honours the tokens earlier processes
 * and other nodes issued; a board generated afresh has a new one, so their tokens are
 * answered with a resync, never with a gap.
 */
export interface StreamSettings {
  /** Bytes a subscriber may leave unread before it is dropped as a slow consumer. */
  bufferCapBytes: number;
  /** Signs clk tokens (CURSOR_SECRET when set). */
  secret: string;
  /** STREAM_RESUME_WAIT_MS: how long a resume from a clk ahead of this board waits for it. */
  resumeWaitMs: number;
  /** STREAM_MAX_SUBSCRIPTIONS: open subscriptions per connection. */
  maxSubscriptions: number;
  /** STREAM_MAX_ANONYMOUS_CONNECTIONS: push-stream connections (WebSocket and SSE) without a key per address. */
  maxAnonymousPerAddress: number;
  authenticator: Authenticator;
  clock: Clock;
  /** The replay window over the tick archive (REPLAY_WINDOW_HOURS): resumes past the delta feed's horizon. */
  replay?: ReplaySource | null;
}

export function buildStream(engine: OddsEngine, options: StreamSettings): StreamSetup {
  const epoch = engine.historyId;
  const hub = new StreamHub(engine, { tokens: new ClockTokens(epoch, options.secret), bufferCapBytes: options.bufferCapBytes, aheadWaitMs: options.resumeWaitMs, maxSubscriptions: options.maxSubscriptions, replay: options.replay ?? null });
  const routeOptions = { hub, authenticator: options.authenticator, clock: options.clock, anonymous: new AnonymousConnections(options.maxAnonymousPerAddress) };
  return { hub, anonymous: routeOptions.anonymous, routes: [streamSseRoute(routeOptions), asyncApiRoute()], sockets: [streamSocketRoute(routeOptions)] };
}
