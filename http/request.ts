import type { ResponseStream, ResponseStreamEvents } from './transport/transport.ts';

// What a route handler sees of a request and what it answers. Handlers are
// synchronous (the engine and SQLite answer synchronously), so everything is read
// from the transport's request before the handler runs and nothing outlives it.

export interface RouteRequest<Q = Record<string, unknown>> {
  /** The request path as received (not decoded). */
  path: string;
  /** Path parameters by name, percent-decoded. */
  params: Readonly<Record<string, string>>;
  /** Parsed, validated query values (defaults applied). */
  query: Q;
  /** meta.warnings for this request (unknown parameters). The server adds them to envelopes. */
  warnings: readonly string[];
  /** From X-Api-Key or Authorization: Bearer; null when absent. */
  apiKey: string | null;
  /** Clock time of this request, epoch ms. */
  now: number;
  /** The Last-Event-ID header (an EventSource reconnecting); '' when absent. */
  lastEventId?: string;
  /**
   * The client's address (the transport's peerAddress: canonical text, '' when unknown);
   * only for routes that declare `peerAddress: true`.
   */
  remoteAddress?: string;
  /** POST routes: the whole request body (at most the route's maxBodyBytes). Absent on GET. */
  body?: Buffer;
  /** POST routes: the Content-Type's media type, lower case, without parameters ('' when absent). */
  contentType?: string;
}

/**
 * Rows already rendered by the engine as JSON objects joined by ',' (no brackets).
 * The bytes are copied into the body before handle's caller returns, so the engine
 * may reuse its render buffer for the next request.
 */
export interface RowsResult {
  kind: 'rows';
  rows: Buffer;
  count: number;
  nextCursor?: string | null;
  /** Epoch ms, meta.updated. */
  updated: number;
  note?: string | null;
}

/** A small result serialized with JSON.stringify. */
export interface DataResult {
  kind: 'data';
  data: readonly unknown[];
  nextCursor?: string | null;
  updated: number;
  note?: string | null;
  /**
   * The records as the ETag compares them, when `data` also carries fields that move
   * with the clock alone (a fair line's quote ages): the ETag is then weak, and a page
   * whose records are otherwise the same revalidates with a 304 (http/server.ts).
   */
  validatorData?: readonly unknown[];
}

/** A complete JSON body that is not an envelope (the OpenAPI document). */
export interface DocumentResult {
  kind: 'document';
  body: Buffer;
}

/**
 * A large prebuilt body (the snapshot) streamed with backpressure. It is not
 * negotiated or cached by the facade: the route owns its bytes and ETag.
 */
export interface LargeBodyResult {
  kind: 'large';
  chunks: readonly Buffer[];
  etag: string;
  contentType: string;
  contentEncoding?: 'gzip';
  /** Default no-cache (revalidate with the ETag); content-named static assets may be cached for good. */
  cacheControl?: string;
  /** The board sequence the body reflects, sent as X-Board-Seq (board data only). */
  boardSeq?: number;
}

/**
 * A large body that is not ready yet (a snapshot variant being built in steps): the
 * facade keeps the request open while the event loop serves others, and writes the
 * body, or the error, when the promise settles; nothing if the client left meanwhile.
 */
export interface PendingLargeBodyResult {
  kind: 'pending';
  /** A small complete JSON body (a POST's answer once its work is done) is written like any document; a DataResult (a query answered off the event loop, such as the tick archive's) in the envelope. */
  body: Promise<LargeBodyResult | DocumentResult | DataResult | RowsResult | StreamResult>;
}

/**
 * An open-ended body (Server-Sent Events): the facade writes the status and headers,
 * opens the transport's response stream and hands it to `open`, which returns what to
 * call when the queue drains or the client leaves. Never cached.
 */
export interface StreamResult {
  kind: 'stream';
  contentType: string;
  open(stream: ResponseStream): ResponseStreamEvents;
}

export type RouteResult = RowsResult | DataResult | DocumentResult | LargeBodyResult | PendingLargeBodyResult | StreamResult;
