// The ingest listener: a second server, apart from the public read port so it can be
// firewalled on its own (INGEST_HOST defaults to 127.0.0.1), in front of the one
// Ingest of the process. Two ways in, the same batches:
//
//   POST /ingest/v1/batches   one batch per request: application/x-ndjson (one change
//                             a line) or application/msgpack (one array of changes);
//                             answered once the batch is durable:
//                             200 {"success": true, "seq": N, "applied": K}
//   GET  /ingest/v1/ws        a WebSocket; each message is one batch (binary: msgpack,
//                             text: NDJSON), answered in the order they came with
//                             {"ack": i, "seq", "applied"} or {"nack": i, "code", "detail", "errors"},
//                             i counting the connection's messages from 0
//
// Every request and handshake needs Authorization: Bearer <token> (token.ts), checked
// before a body is read. Refusals use the service's one error body: 400 invalid_batch
// (with errors[{index, code, field, detail}] naming the first 100 bad changes and errorsOmitted counting the rest), 401
// invalid_token, 413 batch_too_large (naming the cap), 415 unsupported_media_type,
// 503 log_unavailable (nothing of the batch was acknowledged or applied), 503
// not_ready (the board is still loading, or the process is shutting down). The routes
// are not in the public OpenAPI document; /ingest/v1/openapi.json describes them.
//
// The listener opens before the board is loaded, so the operations routes the
// composition root mounts here (/healthz, /readyz, /metrics: no token, they describe
// the process) answer during a long load; the batch routes write only once the gate
// holds the board's Ingest, and answer 503 not_ready before that and after shutdown
// starts.

import { HttpError } from '../http/errors.ts';
import type { DocumentResult } from '../http/request.ts';
import { defineRoute, type AnyRoute } from '../http/router.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { defineSocketRoute, type SocketConnection } from '../http/socketRoute.ts';
import type { TransportChoice } from '../http/transport/transport.ts';
import type { BatchFormat } from './decode.ts';
import { IngestError, type Ingest, type IngestResult } from './ingest.ts';
import { ingestOpenApi } from './listenerOpenApi.ts';
import { tokenAuthenticator } from './token.ts';

export const DEFAULT_MAX_BATCH_BYTES = 16 * 1024 * 1024;

export const NDJSON_TYPE = 'application/x-ndjson';
export const MSGPACK_TYPE = 'application/msgpack';
const FORMATS: Readonly<Record<string, BatchFormat>> = { [NDJSON_TYPE]: 'ndjson', [MSGPACK_TYPE]: 'msgpack' };

/** Which Ingest the batch routes write to: none while the board loads and once shutdown starts. */
export class IngestGate {
  private ingest: Ingest | null = null;
  private reason = 'the board is still loading';

  open(ingest: Ingest): void {
    this.ingest = ingest;
  }

  /** Batches from now on are answered 503 not_ready for `reason`. */
  shut(reason: string): void {
    this.ingest = null;
    this.reason = reason;
  }

  /** The Ingest, or throws the 503 a batch is answered with. */
  take(): Ingest {
    if (this.ingest === null) throw new HttpError('not_ready', `not accepting batches: ${this.reason}; retry later`);
    return this.ingest;
  }
}

export interface IngestListenerOptions {
  gate: IngestGate;
  /** Routes served beside the batch routes without the token (health, readiness, metrics). */
  operationsRoutes?: readonly AnyRoute[];
  /** Routes served behind the token like the batch routes (the webhook admin API, alerts/adminRoutes.ts). */
  adminRoutes?: readonly AnyRoute[];
  token: string;
  host: string;
  /** 0 = ephemeral. */
  port: number;
  /** Largest batch body or WebSocket message (default 16 MiB). */
  maxBatchBytes?: number;
  transport?: TransportChoice;
  log?: (line: string) => void;
}

/** What an IngestError answers over HTTP. */
export function ingestHttpError(error: unknown): HttpError {
  if (!(error instanceof IngestError)) throw error;
  switch (error.code) {
    case 'invalid_batch':
      return new HttpError('invalid_batch', error.message, null, undefined, error.errors, error.errorsOmitted);
    case 'log_unavailable':
      return new HttpError('log_unavailable', `the batch was not written to the log and nothing of it was applied: ${error.message}`);
    default:
      // the write path stopped after an internal error; a restart replays the log
      return new HttpError('log_unavailable', error.message);
  }
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError('batch_too_large', `a batch is at most ${maxBytes} bytes (INGEST_MAX_BATCH_BYTES); split it`);
}

function ackBody(result: IngestResult): DocumentResult {
  return { kind: 'document', body: Buffer.from(`{"success":true,"seq":${result.seq},"applied":${result.applied}}`) };
}

/** Per connection: the index of the next message, and the answers not sent yet because an earlier one is pending. */
interface Connection {
  next: number;
  /** Answers of messages next - waiting.length .. next - 1, in order; null while pending. */
  waiting: (string | null)[];
  /** Index of waiting[0]. */
  head: number;
}

function replyFor(index: number, outcome: { ok: true; result: IngestResult } | { ok: false; error: unknown }): string {
  if (outcome.ok) return `{"ack":${index},"seq":${outcome.result.seq},"applied":${outcome.result.applied}}`;
  const error = outcome.error;
  const http = error instanceof IngestError ? ingestHttpError(error) : error instanceof HttpError ? error : null;
  const code = http?.code ?? 'internal_error';
  const detail = http?.detail ?? `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  return JSON.stringify({ nack: index, code, detail, errors: http?.errors ?? [], ...(http !== null && http.errorsOmitted > 0 ? { errorsOmitted: http.errorsOmitted } : {}) });
}

export async function startIngestListener(options: IngestListenerOptions): Promise<RunningServer> {
  const { gate } = options;
  const maxBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const batches = defineRoute({
    path: '/ingest/v1/batches',
    method: 'POST',
    maxBodyBytes: maxBytes,
    tooLarge,
    contentTypes: [NDJSON_TYPE, MSGPACK_TYPE],
    auth: 'key',
    query: [],
    response: 'IngestAck',
    documented: false,
    handle(req) {
      const format = FORMATS[req.contentType ?? '']!;
      const body = Promise.resolve()
        .then(() => gate.take().submitBody(req.body!, format, 'http'))
        .then(ackBody, (error: unknown) => {
          throw error instanceof HttpError ? error : ingestHttpError(error);
        });
      return { kind: 'pending', body };
    },
  });

  const document = Buffer.from(JSON.stringify(ingestOpenApi(maxBytes)));
  const openapi = defineRoute({
    path: '/ingest/v1/openapi.json',
    auth: 'key',
    query: [],
    response: 'IngestOpenApi',
    responseKind: 'document',
    documented: false,
    handle: () => ({ kind: 'document', body: document }),
  });

  const send = (ws: SocketConnection<Connection>): void => {
    const c = ws.data;
    while (c.waiting.length > 0 && c.waiting[0] !== null) {
      ws.send(c.waiting.shift()!, false);
      c.head++;
    }
  };

  const socket = defineSocketRoute<Connection>({
    path: '/ingest/v1/ws',
    auth: 'key',
    maxPayloadBytes: maxBytes,
    // answers are small; a client that reads none of them for this long is dropped by the transport
    maxBackpressureBytes: 64 * 1024 * 1024,
    accept: () => ({ next: 0, waiting: [], head: 0 }),
    message(ws, data, isBinary) {
      const c = ws.data;
      const index = c.next++;
      c.waiting.push(null);
      const settle = (outcome: { ok: true; result: IngestResult } | { ok: false; error: unknown }) => {
        if (!outcome.ok && !(outcome.error instanceof IngestError) && !(outcome.error instanceof HttpError)) log(`[ingest] websocket message ${index}: ${String((outcome.error as Error)?.stack ?? outcome.error)}`);
        c.waiting[index - c.head] = replyFor(index, outcome);
        send(ws);
      };
      Promise.resolve()
        .then(() => gate.take().submitBody(data, isBinary ? 'msgpack' : 'ndjson', 'ws'))
        .then(
          (result) => settle({ ok: true, result }),
          (error: unknown) => settle({ ok: false, error }),
        );
    },
  });

  return createServer({
    routes: [batches, openapi, ...(options.adminRoutes ?? []), ...(options.operationsRoutes ?? [])],
    sockets: [socket],
    host: options.host,
    port: options.port,
    authenticator: tokenAuthenticator(options.token),
    openapi: false,
    transport: options.transport,
    log,
  });
}
