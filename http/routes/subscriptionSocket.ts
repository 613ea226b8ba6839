// The WebSocket door of a push stream with many subscriptions per connection: the odds
// stream (/api/v1/stream, stream.ts) and the signal stream (/api/v1/stream/signals/ws,
// signalSocket.ts). What happens between the socket and the stream is the same for both
// and lives here once: the keyless connections per address counted from open to close, a
// text frame parsed into subscribe / unsubscribe / heartbeat, each subscribe counted
// against the key as a request, a bad frame answered with a status on the connection
// (never a thrown error out of the transport's callback).
import type { Clock } from '../../engine/clock.ts';
import type { StatusCode } from '../../engine/stream/streamSink.ts';
import type { Authenticator } from '../auth.ts';
import { defineSocketRoute, type AnySocketRoute, type SocketConnection } from '../socketRoute.ts';
import type { AnonymousConnections } from './anonymousConnections.ts';
import { StreamRequestError, type StreamClientMessage } from './streamParams.ts';

/** One connection's subscriptions, as its stream keeps them. */
export interface SubscriptionConnection<S> {
  /** Set once the connection is gone (closed, or dropped as a slow consumer): its frames are ignored. */
  readonly closed: boolean;
  subscribe(request: S): void;
  /** False when no subscription of that id is open. */
  unsubscribe(id: string): boolean;
  heartbeat(): void;
  status(code: StatusCode, detail: string, id?: string, param?: string | null): void;
  /** The socket's queued bytes went out (uWS's drain). */
  drained?(): void;
  /** The socket closed: every subscription ends. */
  disconnected(): void;
}

export interface SubscriptionSocketData<C> {
  apiKey: string | null;
  remoteAddress: string;
  /** The peer's address while it is counted as an anonymous connection (from open to close); null otherwise. */
  anonymousFrom: string | null;
  connection: C | null;
}

export interface SubscriptionSocketOptions<S extends { id: string }, C extends SubscriptionConnection<S>> {
  path: string;
  /** Largest client frame; a bigger one closes the connection with 1009. */
  maxPayloadBytes: number;
  /** The transport's own send limit, above the stream's STREAM_BUFFER_BYTES cap (checked by the stream after each send). */
  maxBackpressureBytes: number;
  anonymous: AnonymousConnections;
  authenticator: Authenticator;
  clock: Clock;
  /** One text frame into a client message; throws StreamRequestError. */
  parse(text: string): StreamClientMessage<S>;
  /** The stream's side of a newly opened connection. */
  connect(ws: SocketConnection<SubscriptionSocketData<C>>): C;
}

export function subscriptionSocketRoute<S extends { id: string }, C extends SubscriptionConnection<S>>(
  options: SubscriptionSocketOptions<S, C>,
): AnySocketRoute {
  const { anonymous, authenticator, clock, parse, connect } = options;
  return defineSocketRoute<SubscriptionSocketData<C>>({
    path: options.path,
    auth: 'key',
    maxPayloadBytes: options.maxPayloadBytes,
    maxBackpressureBytes: options.maxBackpressureBytes,
    idleTimeoutSeconds: 120,
    accept(req) {
      if (req.apiKey === null) anonymous.check(req.remoteAddress);
      return { apiKey: req.apiKey, remoteAddress: req.remoteAddress, anonymousFrom: null, connection: null };
    },
    open(ws) {
      if (ws.data.apiKey === null) ws.data.anonymousFrom = anonymous.opened(ws.data.remoteAddress);
      ws.data.connection = connect(ws);
    },
    message(ws, data, isBinary) {
      const connection = ws.data.connection;
      if (connection === null || connection.closed) return;
      if (isBinary) {
        connection.status('invalid_subscription', 'client messages are JSON text frames');
        return;
      }
      try {
        const message = parse(data.toString('utf8'));
        if (message.op === 'heartbeat') return connection.heartbeat();
        if (message.op === 'unsubscribe') {
          if (!connection.unsubscribe(message.id)) connection.status('invalid_subscription', `no open subscription ${message.id} on this connection`, message.id, 'id');
          return;
        }
        const auth = authenticator.check(ws.data.apiKey, 'key', clock.now());
        if (!auth.ok) {
          connection.status(auth.code as StatusCode, auth.detail, message.subscribe.id);
          return;
        }
        connection.subscribe(message.subscribe);
      } catch (error) {
        if (error instanceof StreamRequestError) connection.status(error.code, error.detail, error.id, error.param);
        else throw error;
      }
    },
    drain(ws) {
      ws.data.connection?.drained?.();
    },
    close(ws) {
      if (ws.data.anonymousFrom !== null) anonymous.closed(ws.data.anonymousFrom);
      ws.data.anonymousFrom = null;
      ws.data.connection?.disconnected();
    },
  });
}
