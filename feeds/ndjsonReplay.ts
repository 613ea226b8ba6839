// Replays a file (or stdin) of changes in the ingest format, one JSON change a line,
// in batches to a BatchSink, with a progress line (lines/s, ETA when the size is
// known) and --from-line to resume after an interruption: the line numbers of the
// last acknowledged batch are in every progress line. A line that is not JSON, or a
// batch the ingest path refuses, stops the replay with its line numbers. A batch the
// ingest path could not take (listener away, log unavailable) is sent again, the same
// batch, after a back-off, a few times before the replay stops.

import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { IngestChange } from '../ingest/changes.ts';
import { BatchRejected, type BatchSink } from './batchSink.ts';

export interface ReplayOptions {
  sink: BatchSink;
  /** A path, or '-' for stdin. */
  file: string;
  /** 1-based: lines before it are skipped. */
  fromLine?: number;
  batchSize?: number;
  progress?: (line: string) => void;
  /** Said when a batch is sent again. */
  log?: (line: string) => void;
  /** Where the token came from (named when the listener refuses it; never the token). */
  tokenFrom?: string;
  stdin?: Readable;
  /** Times a batch the ingest path could not take is sent again (default 5; waits 0.5 s doubling, jittered). */
  resends?: number;
  retryBaseMs?: number;
}

export interface ReplayResult {
  lines: number;
  changes: number;
  batches: number;
  /** The last line acknowledged (resume with --from-line lastLine + 1). */
  lastLine: number;
}

export async function replayNdjson(options: ReplayOptions): Promise<ReplayResult> {
  const fromLine = options.fromLine ?? 1;
  const batchSize = options.batchSize ?? 1000;
  // the size first: a missing file fails here, before a stream exists to emit its error unheard
  const totalBytes = options.file === '-' ? null : statSync(options.file).size;
  const input = options.file === '-' ? (options.stdin ?? process.stdin) : createReadStream(options.file);
  const started = performance.now();
  let bytes = 0;
  let lineNo = 0;
  let batch: IngestChange[] = [];
  let batchFirst = 0;
  const result: ReplayResult = { lines: 0, changes: 0, batches: 0, lastLine: fromLine - 1 };
  const flush = async () => {
    if (batch.length === 0) return;
    try {
      for (let resend = 0; ; resend++) {
        try {
          await options.sink.submit(batch);
          break;
        } catch (error) {
          if (!(error instanceof BatchRejected) || !error.retryable || resend >= (options.resends ?? 5)) throw error;
          const ms = (options.retryBaseMs ?? 500) * 2 ** resend * (0.5 + Math.random());
          options.log?.(`ndjson: lines ${batchFirst}-${lineNo} not taken (${error.code}: ${error.message}); sending them again in ${(ms / 1000).toFixed(1)} s`);
          await new Promise((resolve) => setTimeout(resolve, ms));
        }
      }
    } catch (error) {
      if (error instanceof BatchRejected && error.retryable) {
        throw new Error(`lines ${batchFirst}-${lineNo} were not taken: ${error.message}; resume with --from-line ${batchFirst} once the ingest listener takes batches again`);
      }
      if (error instanceof BatchRejected && error.code === 'invalid_token') {
        throw new Error(`the ingest listener refused the token${options.tokenFrom ? ` from ${options.tokenFrom}` : ''} (${error.message}); nothing from line ${batchFirst} on was taken; resume with --from-line ${batchFirst} once the token is the server's`);
      }
      if (error instanceof BatchRejected && (error.code === 'batch_too_large' || error.code === 'http_413')) {
        throw new Error(`lines ${batchFirst}-${lineNo} are more than the ingest listener takes in one batch (${error.message}); resume with --from-line ${batchFirst} and a smaller --batch`);
      }
      if (error instanceof BatchRejected) {
        const first = error.errors[0];
        const where = first !== undefined ? ` (line ${batchFirst + first.index}: ${first.code} ${first.field ?? ''} ${first.detail})` : '';
        throw new Error(`lines ${batchFirst}-${lineNo} were refused: ${error.message}${where}; fix them and resume with --from-line ${batchFirst}`);
      }
      throw error;
    }
    result.changes += batch.length;
    result.batches++;
    result.lastLine = lineNo;
    batch = [];
    options.progress?.(progressLine(result, started, bytes, totalBytes));
  };
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const text of lines) {
    lineNo++;
    bytes += Buffer.byteLength(text) + 1;
    if (lineNo < fromLine || text.trim() === '') continue;
    let change: IngestChange;
    try {
      change = JSON.parse(text) as IngestChange;
    } catch {
      throw new Error(`line ${lineNo} is not JSON; resume with --from-line ${lineNo + 1} to skip it`);
    }
    if (batch.length === 0) batchFirst = lineNo;
    batch.push(change);
    result.lines++;
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return result;
}

function progressLine(r: ReplayResult, started: number, bytes: number, totalBytes: number | null): string {
  const seconds = (performance.now() - started) / 1000;
  const rate = seconds > 0 ? r.changes / seconds : 0;
  let bar = '';
  let eta = '';
  if (totalBytes !== null && totalBytes > 0) {
    const done = Math.min(1, bytes / totalBytes);
    const width = 20;
    bar = `[${'#'.repeat(Math.round(done * width)).padEnd(width, '.')}] ${(done * 100).toFixed(1)}% `;
    eta = done > 0 ? ` · ETA ${Math.max(0, Math.round((seconds / done) * (1 - done)))} s` : '';
  }
  return `ndjson: ${bar}line ${r.lastLine.toLocaleString('en-US')} · ${r.changes.toLocaleString('en-US')} changes in ${r.batches} batches · ${Math.round(rate).toLocaleString('en-US')}/s${eta}`;
}
