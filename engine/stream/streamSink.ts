// What the push stream's hub and its transports agree on: a client connection as the
// hub sees it (StreamSink, adapted by the WebSocket and SSE routes), what a subscribe
// asks for, and the codes of the status messages.
import type { OddsFormat } from '../rowJson.ts';
import type { StreamFilter } from './streamFilter.ts';
import type { OutgoingMessage, WireFormat } from './streamMessages.ts';

/**
 * 'sent': taken without pushing back (nothing queued, or less than the smallest buffer
 * cap, 64 KiB: the hub reads bufferedAmount only after 'backpressure'); 'backpressure':
 * queued behind earlier bytes, drained() follows; 'dropped': not taken.
 */
export type SinkResult = 'sent' | 'backpressure' | 'dropped';

/** One client connection as the hub sees it. */
export interface StreamSink {
  send(message: OutgoingMessage): SinkResult;
  /** Bytes queued for the client and not yet written to its socket. */
  bufferedAmount(): number;
  /** Ends the connection (after a status message saying why). */
  close(reason: 'slow_consumer'): void;
  /**
   * Runs `sends` with the connection's writes gathered and handed to the socket as one
   * write when it returns (uWS cork); absent, or when the transport cannot gather them,
   * the sends are written as they come. Bytes the socket did not take at the end show in
   * bufferedAmount().
   */
  cork?(sends: () => void): void;
}

export interface SubscribeRequest {
  id: string;
  filter: StreamFilter;
  /** The clk of the last message the client applied (resume), or null for a fresh image. */
  clk: string | null;
  /** 500-30,000. */
  heartbeatMs: number;
  /** 0: a delta per applied batch; otherwise at most one delta per this many ms. */
  conflateMs: number;
  format: WireFormat;
  oddsFormat: OddsFormat;
}

export type StatusCode = 'invalid_subscription' | 'too_many_subscriptions' | 'slow_consumer' | 'resync' | 'invalid_parameter' | 'missing_parameter' | 'invalid_api_key' | 'missing_api_key' | 'rate_limited';
