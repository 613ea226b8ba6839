// WebSocket endpoints declared as data, next to the HTTP routes (router.ts). The facade
// authenticates the handshake like any request, then hands the connection to the
// route's callbacks; the transport underneath is uWS's own WebSocket on the native
// transport and the `ws` package on node:http, with the same SocketConnection either way.
//
//   const ingest = defineSocketRoute({
//     path: '/api/v1/ingest/ws',
//     auth: 'key',
//     maxPayloadBytes: 1 << 20,
//     accept: (req) => ({ apiKey: req.apiKey }),       // throw an HttpError to refuse
//     message(ws, data, isBinary) { ... ws.send(reply, false) ... },
//   });
//   const server = await createServer({ routes, sockets: [ingest] });
//   server.publish('odds', bytes, true);             // every connection subscribed to 'odds'
import type { RouteAuth } from './router.ts';
import type { SocketHandlers } from './transport/transport.ts';

export type { SendResult, SocketConnection } from './transport/transport.ts';

/** What a route sees of the handshake; read before the connection opens. */
export interface SocketUpgradeRequest {
  path: string;
  /** Raw query string ('' when none). */
  query: string;
  /** From X-Api-Key or Authorization: Bearer; null when absent. */
  apiKey: string | null;
  now: number;
  /** The peer's address as text (IPv4 or IPv6, as the transport reports it). */
  remoteAddress: string;
}

export interface SocketRouteDef<U = unknown> extends SocketHandlers<U> {
  /** Exact path (no parameters). */
  path: string;
  auth: RouteAuth;
  /** Largest message accepted; a bigger one closes the connection with 1009. Default 64 KiB. */
  maxPayloadBytes?: number;
  /** Queued outgoing bytes above which send() drops the message. Default 1 MiB. */
  maxBackpressureBytes?: number;
  /** Seconds without traffic before the connection is closed; 0 never. Default 120. */
  idleTimeoutSeconds?: number;
  /** After authentication: the connection's data, or throw an HttpError to refuse with that answer. */
  accept(req: SocketUpgradeRequest): U;
}

export function defineSocketRoute<U>(route: SocketRouteDef<U>): SocketRouteDef<U> {
  return route;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySocketRoute = SocketRouteDef<any>;
