// A connected client of the push stream: its subscriptions, whether its socket is
// pushing back, and the deltas waiting for the batch's one socket write. What it is asked
// (subscribe, heartbeat, drained...) it hands to the hub that made it.
import type { OutgoingMessage, WireFormat } from './streamMessages.ts';
import type { StatusCode, StreamSink, SubscribeRequest } from './streamSink.ts';
import type { Subscription } from './subscription.ts';

/** What a client asks of its hub (StreamHub implements it). */
export interface ClientHub {
  wallNow(): number;
  subscribe(client: StreamClient, request: SubscribeRequest): void;
  unsubscribe(client: StreamClient, id: string): boolean;
  sendHeartbeat(client: StreamClient): void;
  sendStatus(client: StreamClient, code: StatusCode, detail: string, id?: string, param?: string | null): void;
  drained(client: StreamClient): void;
  disconnect(client: StreamClient): void;
}

/** A connected client: its subscriptions, and whether its socket is pushing back. */
export class StreamClient {
  readonly subs = new Map<string, Subscription<StreamClient>>();
  /**
   * subs.size as a plain field: the fan-out reads it once per message sent, and each
   * object it touches per message is one more load after a socket write that has
   * filled the CPU's caches with the kernel's data (the Map itself stays untouched).
   */
  subscriptionCount = 0;
  backedUp = false;
  closed = false;
  lastSentAt: number;
  /** Heartbeats and connection-level statuses use the wire format of the latest subscribe. */
  format: WireFormat = 'json';
  /**
   * A client with several subscriptions gets the batch's deltas for all of them in one
   * socket write: they wait here (subscription i gets message i) until every group of
   * the batch was fanned out.
   */
  readonly corkedSubs: Subscription<StreamClient>[] = [];
  readonly corkedMessages: OutgoingMessage[] = [];

  constructor(
    private readonly hub: ClientHub,
    readonly sink: StreamSink,
  ) {
    this.lastSentAt = hub.wallNow();
  }

  subscribe(request: SubscribeRequest): void {
    this.hub.subscribe(this, request);
  }

  unsubscribe(id: string): boolean {
    return this.hub.unsubscribe(this, id);
  }

  /** The client asked for a heartbeat: answered at once. */
  heartbeat(): void {
    this.hub.sendHeartbeat(this);
  }

  /** A status message (errors found by the caller, e.g. an invalid subscribe). */
  status(code: StatusCode, detail: string, id?: string, param?: string | null): void {
    this.hub.sendStatus(this, code, detail, id, param);
  }

  /** The socket wrote what was queued. */
  drained(): void {
    this.hub.drained(this);
  }

  /** The connection is gone. */
  disconnected(): void {
    this.hub.disconnect(this);
  }

  /** The shortest heartbeat interval of its subscriptions (Infinity with none); kept by the hub as they come and go. */
  heartbeatEvery = Infinity;

  heartbeatMs(): number {
    let ms = Infinity;
    for (const sub of this.subs.values()) if (sub.request.heartbeatMs < ms) ms = sub.request.heartbeatMs;
    return ms;
  }
}
