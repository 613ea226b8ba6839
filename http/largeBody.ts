// Streams a large prebuilt body (the snapshot: tens of MB) to one client with
// backpressure. The chunks are shared, immutable Buffers: each client only keeps an
// index and offset into them, uWS copies at most what the socket accepts, and a
// client that disconnects mid-body just drops its position.
import type { HttpResponse } from 'uWebSockets.js';

/** Process-wide counters (observability and tests): streams begun, finished, cut off, and backpressure waits. */
export const bodyStreamStats = { started: 0, completed: 0, aborted: 0, waits: 0 };

export interface BodyHeaders {
  status: string;
  headers: readonly (readonly [string, string])[];
}

/**
 * Writes status, headers and the body. Call from the request handler (uWS corks it)
 * or inside res.cork. onDone(true) after the last byte is handed over, onDone(false)
 * if the client went away first.
 */
export function writeBody(
  res: HttpResponse,
  chunks: readonly Buffer[] | Buffer,
  head: BodyHeaders,
  onDone?: (completed: boolean) => void,
): void {
  const list: readonly Buffer[] = Buffer.isBuffer(chunks) ? [chunks] : chunks;
  let total = 0;
  for (const chunk of list) total += chunk.length;
  const stream = new BodyStream(res, list, total, onDone);
  bodyStreamStats.started++;
  res.onAborted(() => stream.abort());
  res.writeStatus(head.status);
  for (const [name, value] of head.headers) res.writeHeader(name, value);
  stream.pump();
}

class BodyStream {
  private index = 0;
  /** Write offset at which the current chunk began. */
  private chunkBase = 0;
  private finished = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly chunks: readonly Buffer[],
    private readonly total: number,
    private readonly onDone: ((completed: boolean) => void) | undefined,
  ) {}

  abort(): void {
    if (this.finished) return;
    this.finished = true;
    bodyStreamStats.aborted++;
    this.onDone?.(false);
  }

  /** Hands over chunks until done or the socket pushes back. */
  pump(): void {
    if (this.total === 0) {
      this.res.end();
      this.finish();
      return;
    }
    while (this.index < this.chunks.length && !this.finished) {
      this.chunkBase = this.res.getWriteOffset();
      if (!this.attempt(this.chunks[this.index]!)) {
        bodyStreamStats.waits++;
        this.res.onWritable((offset) => this.resume(offset));
        return;
      }
    }
  }

  /** true when the chunk was fully handed over (or the response finished). */
  private attempt(bytes: Buffer): boolean {
    const [ok, done] = this.res.tryEnd(bytes, this.total);
    if (done) {
      this.finish();
      return true;
    }
    if (ok) this.index++;
    return ok;
  }

  private resume(offset: number): boolean {
    if (this.finished) return true;
    const chunk = this.chunks[this.index]!;
    if (!this.attempt(chunk.subarray(offset - this.chunkBase))) return false;
    if (!this.finished) this.pump();
    return true;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    bodyStreamStats.completed++;
    this.onDone?.(true);
  }
}
