// Streams a large prebuilt body (the snapshot: tens of MB) to one client with
// backpressure. The chunks are shared, immutable Buffers: each client only keeps its
// position in them, the socket is handed at most what it accepts, and a client that
// disconnects mid-body just drops its position. How the socket is fed is the
// transport's (uWS tryEnd/onWritable, node:http write/'drain'); the counters are here.
import type { Transport, TransportResponse } from './transport/transport.ts';

/** Process-wide counters (observability and tests): streams begun, finished, cut off, and backpressure waits. */
export const bodyStreamStats = { started: 0, completed: 0, aborted: 0, waits: 0 };

export interface BodyHeaders {
  status: string;
  headers: readonly (readonly [string, string])[];
}

/**
 * Writes status, headers and the body (with its Content-Length). Call from the request
 * handler or inside res.cork. onDone(true) after the last byte is handed over,
 * onDone(false) if the client went away first.
 */
export function writeBody(
  transport: Transport,
  res: TransportResponse,
  chunks: readonly Buffer[] | Buffer,
  head: BodyHeaders,
  onDone?: (completed: boolean) => void,
): void {
  const list: readonly Buffer[] = Buffer.isBuffer(chunks) ? [chunks] : chunks;
  let total = 0;
  for (const chunk of list) total += chunk.length;
  bodyStreamStats.started++;
  res.writeStatus(head.status);
  for (const [name, value] of head.headers) res.writeHeader(name, value);
  transport.streamBody(res, list, total, {
    waited: () => {
      bodyStreamStats.waits++;
    },
    done: (completed) => {
      if (completed) bodyStreamStats.completed++;
      else bodyStreamStats.aborted++;
      onDone?.(completed);
    },
  });
}
