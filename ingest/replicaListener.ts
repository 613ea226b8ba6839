// The ingest port of a replica: the same paths as the writer's ingest listener
// (listener.ts), each refused with 403 read_only. A replica applies only what the
// writer published to the stream; a feed pointed at it by mistake gets a clear answer
// naming the reason instead of a connection refused, and nothing it sends is read.
import { HttpError } from '../http/errors.ts';
import { defineRoute, type AnyRoute } from '../http/router.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { defineSocketRoute } from '../http/socketRoute.ts';
import type { TransportChoice } from '../http/transport/transport.ts';

export interface ReadOnlyListenerOptions {
  host: string;
  /** 0 = ephemeral. */
  port: number;
  transport?: TransportChoice;
  log?: (line: string) => void;
  /** Served beside the refused batch routes (health, readiness, metrics). */
  operationsRoutes?: readonly AnyRoute[];
}

export const READ_ONLY_DETAIL = 'this node is a read replica (ROLE=replica): it applies the writer\'s stream and takes no writes; send batches to the writer\'s ingest listener';

function readOnly(): HttpError {
  return new HttpError('read_only', READ_ONLY_DETAIL);
}

export function startReadOnlyListener(options: ReadOnlyListenerOptions): Promise<RunningServer> {
  const batches = defineRoute({
    path: '/ingest/v1/batches',
    method: 'POST',
    // refused before its body is read: a declared length over this closes the connection
    maxBodyBytes: 1,
    tooLarge: readOnly,
    auth: 'key',
    authenticate: false,
    query: [],
    response: 'IngestAck',
    documented: false,
    handle() {
      throw readOnly();
    },
  });
  const socket = defineSocketRoute<null>({
    path: '/ingest/v1/ws',
    auth: 'key',
    accept() {
      throw readOnly();
    },
    message() {},
  });
  return createServer({ routes: [batches, ...(options.operationsRoutes ?? [])], sockets: [socket], host: options.host, port: options.port, openapi: false, transport: options.transport, log: options.log });
}
