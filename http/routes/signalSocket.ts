// /api/v1/stream/signals/ws: the signal stream (engine/stream/signalTopics.ts) over a
// WebSocket. The same topics, filters and records as GET /api/v1/stream/signals, many
// subscriptions per connection, each opened and closed by a client message:
//
//   -> {"op":"subscribe","id":"lowhold","topic":"best_price","filter":{"league":["nba"]},"maxHold":0.02}
//   <- {"op":"subscribed","id":"lowhold","topic":"best_price"}
//   <- {"op":"signal","id":"lowhold","topic":"best_price","groups":[...],"records":[...]}
//   -> {"op":"unsubscribe","id":"lowhold"}        -> {"op":"heartbeat"}   <- {"op":"heartbeat"}
//
// A message's body is the SSE event's data, serialised once per wire format for every
// subscriber (SignalMessage); each subscription writes its op and id in front of those
// bytes (withHead), which costs a copy, not a serialisation. format msgpack: binary
// frames, one MessagePack map each.
//
// The limits are the push stream's (issue 28), read from the same settings and, for the
// keyless connections per address, counted in the same AnonymousConnections as the odds
// stream's WebSocket and SSE doors: STREAM_MAX_ANONYMOUS_CONNECTIONS (429 at the
// handshake), STREAM_MAX_SUBSCRIPTIONS per connection (status too_many_subscriptions),
// STREAM_BUFFER_BYTES unread (status slow_consumer, then close 1008). Each subscription
// counts as one request against the key, as on the odds stream.
import { messageHead, withHead, type MessageHead, type SignalMessage } from '../../engine/stream/signalMessage.ts';
import { plainMessage, type WireFormat } from '../../engine/stream/streamMessages.ts';
import type { StatusCode } from '../../engine/stream/streamSink.ts';
import type { AnySocketRoute, SocketConnection } from '../socketRoute.ts';
import type { Clock } from '../../engine/clock.ts';
import type { SignalTopic, SignalTopics } from '../../engine/stream/signalTopics.ts';
import type { Authenticator } from '../auth.ts';
import type { AnonymousConnections } from './anonymousConnections.ts';
import { parseSignalClientMessage, SIGNAL_HEARTBEAT_MS, topicQuery, type SignalSubscribe } from './signalParams.ts';
import { MAX_CLIENT_MESSAGE_BYTES, MAX_QUEUED_BYTES } from './stream.ts';
import { subscriptionSocketRoute, type SubscriptionConnection, type SubscriptionSocketData } from './subscriptionSocket.ts';

export const SIGNAL_SOCKET_PATH = '/api/v1/stream/signals/ws';

/** What both doors of the signal stream share with the push stream (http/routes/stream.ts). */
export interface SignalStreamSettings {
  topics: SignalTopics;
  /** The push stream's keyless connections per address (STREAM_MAX_ANONYMOUS_CONNECTIONS), shared with it. */
  anonymous: AnonymousConnections;
  /** STREAM_BUFFER_BYTES: unread bytes past which a client is disconnected (slow_consumer). */
  bufferCapBytes: number;
  /** STREAM_MAX_SUBSCRIPTIONS: open subscriptions per WebSocket connection. */
  maxSubscriptions: number;
  /** Counts each WebSocket subscription against its key, as a request. */
  authenticator: Authenticator;
  clock: Clock;
}

interface Subscription {
  unsubscribe(): void;
  heartbeatMs: number;
}

type SocketData = SubscriptionSocketData<SignalConnection>;

export function signalSocketRoute(settings: SignalStreamSettings): AnySocketRoute {
  return subscriptionSocketRoute<SignalSubscribe, SignalConnection>({
    path: SIGNAL_SOCKET_PATH,
    maxPayloadBytes: MAX_CLIENT_MESSAGE_BYTES,
    // the cap is STREAM_BUFFER_BYTES, checked after each send: the transport itself never drops
    maxBackpressureBytes: MAX_QUEUED_BYTES,
    anonymous: settings.anonymous,
    authenticator: settings.authenticator,
    clock: settings.clock,
    parse: parseSignalClientMessage,
    connect: (ws) => new SignalConnection(ws, settings),
  });
}

/** One WebSocket's subscriptions to the signal topics, and the caps it is held to. */
class SignalConnection implements SubscriptionConnection<SignalSubscribe> {
  private readonly subs = new Map<string, Subscription>();
  closed = false;
  /** Heartbeats and connection-level statuses use the wire format of the latest subscribe. */
  private format: WireFormat = 'json';
  private lastSentAt = Date.now();
  private timer: NodeJS.Timeout | null = null;
  /** The shortest heartbeat interval of its subscriptions (Infinity with none). */
  private heartbeatEvery = Infinity;

  constructor(
    private readonly ws: SocketConnection<SocketData>,
    private readonly settings: SignalStreamSettings,
  ) {}

  subscribe(request: SignalSubscribe): void {
    const { id } = request;
    if (this.subs.has(id)) {
      this.status('invalid_subscription', `a subscription with id ${id} is already open on this connection; unsubscribe it first`, id, 'id');
      return;
    }
    // a client that leaves more than the cap unread asks for nothing more
    if (this.ws.getBufferedAmount() > this.settings.bufferCapBytes) {
      this.dropSlow();
      return;
    }
    if (this.subs.size >= this.settings.maxSubscriptions) {
      this.status('too_many_subscriptions', `a connection holds at most ${this.settings.maxSubscriptions} subscriptions (STREAM_MAX_SUBSCRIPTIONS); unsubscribe one first`, id);
      return;
    }
    this.format = request.format;
    const topic = request.query.topic;
    const format = request.format;
    const head: MessageHead = messageHead({ op: 'signal', id });
    const subscription: Subscription = { heartbeatMs: request.query.heartbeat_ms, unsubscribe: () => undefined };
    this.subs.set(id, subscription);
    this.heartbeatEvery = Math.min(this.heartbeatEvery, subscription.heartbeatMs);
    // said before the subscription can send: a steam move in the same turn comes after it
    if (!this.send(plainMessage(format, { op: 'subscribed', id, topic }), format === 'msgpack')) return;
    subscription.unsubscribe = this.settings.topics.subscribe(topicQuery(request.query, this.settings.clock.now()), {
      send: (_topic: SignalTopic, _bytes: Buffer, message: SignalMessage) => {
        if (this.closed || this.subs.get(id) !== subscription) return false;
        return this.send(withHead(message, head, format), format === 'msgpack');
      },
    });
    this.startHeartbeats();
  }

  unsubscribe(id: string): boolean {
    const sub = this.subs.get(id);
    if (sub === undefined) return false;
    this.subs.delete(id);
    sub.unsubscribe();
    this.heartbeatEvery = Math.min(Infinity, ...[...this.subs.values()].map((s) => s.heartbeatMs));
    return true;
  }

  heartbeat(): void {
    // through the cap like any message: a client asking for heartbeats it never reads is dropped
    this.send(plainMessage(this.format, { op: 'heartbeat' }), this.format === 'msgpack');
  }

  status(code: StatusCode, detail: string, id?: string, param?: string | null): void {
    const message: Record<string, unknown> = { op: 'status' };
    if (id !== undefined) message.id = id;
    message.code = code;
    message.detail = detail;
    if (param !== undefined && param !== null) message.param = param;
    this.send(plainMessage(this.format, message), this.format === 'msgpack');
  }

  /** The connection is gone: every subscription ends. */
  disconnected(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const subs = [...this.subs.values()];
    this.subs.clear();
    for (const sub of subs) sub.unsubscribe();
  }

  /** One frame; false when the client was dropped (slow_consumer) or is gone. */
  private send(bytes: Buffer, binary: boolean): boolean {
    if (this.closed) return false;
    const result = this.ws.send(bytes, binary);
    if (result === 'dropped' || this.ws.getBufferedAmount() > this.settings.bufferCapBytes) {
      this.dropSlow();
      return false;
    }
    this.lastSentAt = Date.now();
    return true;
  }

  private dropSlow(): void {
    if (this.closed) return;
    const detail = `the connection queued more than ${this.settings.bufferCapBytes} bytes it did not read (STREAM_BUFFER_BYTES): disconnected; subscribe again for a full image`;
    this.ws.send(plainMessage(this.format, { op: 'status', code: 'slow_consumer', detail }), this.format === 'msgpack');
    this.disconnected();
    this.ws.end(1008, 'slow_consumer');
  }

  private startHeartbeats(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.closed || this.subs.size === 0 || Date.now() - this.lastSentAt < this.heartbeatEvery) return;
      this.heartbeat();
    }, SIGNAL_HEARTBEAT_MS.min);
    this.timer.unref();
  }
}
