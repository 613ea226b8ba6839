// Where a feed's batches go. Two implementations of one interface: in process (the
// service's own Ingest: no network hop, what FEED=... inside the server and the tests
// use) and over HTTP to the ingest listener (POST /ingest/v1/batches, NDJSON body,
// Bearer token), for a feed running as its own process.

import type { Ingest } from '../ingest/ingest.ts';
import { IngestError } from '../ingest/ingest.ts';
import type { ChangeError, IngestChange } from '../ingest/changes.ts';

export interface BatchAck {
  /** The board seq after the batch. */
  seq: number;
  applied: number;
}

/** A batch the ingest path refused; `errors` names each bad change by its index in the batch. */
export class BatchRejected extends Error {
  constructor(
    readonly code: string,
    detail: string,
    readonly errors: ChangeError[] = [],
    /** True when sending it again later may succeed (the log was unavailable, the server was busy or away). */
    readonly retryable = false,
  ) {
    super(detail);
    this.name = 'BatchRejected';
  }
}

export interface BatchSink {
  /** Resolves once the batch is durable and applied; rejects with BatchRejected. */
  submit(changes: readonly IngestChange[]): Promise<BatchAck>;
  /** Says where batches go (for the progress line). */
  readonly description: string;
}

export class InProcessSink implements BatchSink {
  readonly description = 'in process';
  constructor(private readonly ingest: Ingest) {}

  async submit(changes: readonly IngestChange[]): Promise<BatchAck> {
    try {
      const result = await this.ingest.submit(changes);
      return { seq: result.seq, applied: result.applied };
    } catch (error) {
      if (error instanceof IngestError) throw new BatchRejected(error.code, error.message, error.errors, error.code === 'log_unavailable');
      throw error;
    }
  }
}

export interface HttpSinkOptions {
  /** The ingest listener's origin, e.g. http://127.0.0.1:8081. */
  url: string;
  token: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

/**
 * POST /ingest/v1/batches as the write path documents it: 200 {success, seq, applied};
 * 400 invalid_batch with errors[]; 401 invalid_token; 413 batch_too_large; 415; 503
 * log_unavailable. Every refusal becomes a BatchRejected with the server's code and detail;
 * a listener that cannot be reached is `ingest_unreachable`, an answer that never came
 * `ingest_no_answer` (both retryable).
 */
/** Connection errors that mean the request never left this process or never reached a listener. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export class HttpBatchSink implements BatchSink {
  readonly description: string;
  private readonly endpoint: string;

  constructor(private readonly options: HttpSinkOptions) {
    this.endpoint = new URL('/ingest/v1/batches', options.url).toString();
    this.description = this.endpoint;
  }

  async submit(changes: readonly IngestChange[]): Promise<BatchAck> {
    const body = changes.map((change) => JSON.stringify(change)).join('\n') + '\n';
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/x-ndjson' },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
      text = await response.text();
    } catch (error) {
      // Refused or unresolved connections never carried the batch; any other failure (a
      // timeout, a reset while waiting for the answer) may come after the batch was logged.
      const cause = ((error as { cause?: { code?: unknown } }).cause?.code ?? '') as string;
      const delivered = !NOT_SENT.has(cause);
      const why = (error as Error).name === 'TimeoutError' ? `no answer within ${(this.options.timeoutMs ?? 30_000) / 1000} s` : `${(error as Error).message}${cause ? ` (${cause})` : ''}`;
      throw new BatchRejected(delivered ? 'ingest_no_answer' : 'ingest_unreachable', `${this.endpoint}: ${why}`, [], true);
    }
    let answer: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object') answer = parsed as Record<string, unknown>;
    } catch {
      // a body that is not JSON is reported by status below
    }
    if (response.status === 200 && answer.success === true && typeof answer.seq === 'number' && typeof answer.applied === 'number') {
      return { seq: answer.seq, applied: answer.applied };
    }
    const code = typeof answer.code === 'string' ? answer.code : `http_${response.status}`;
    const detail = typeof answer.detail === 'string' ? answer.detail : `${response.status} ${response.statusText}: ${text.slice(0, 200)}`;
    const errors = Array.isArray(answer.errors) ? (answer.errors as ChangeError[]) : [];
    const retryable = response.status === 503 || response.status === 429 || response.status >= 500;
    throw new BatchRejected(code, `${this.endpoint} answered ${response.status} ${code}: ${detail}`, errors, retryable);
  }
}
