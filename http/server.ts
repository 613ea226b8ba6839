// The HTTP facade over a transport (http/transport/: uWebSockets.js when a native
// binary loads, else node:http). One catch-all handler: everything is read from the
// request synchronously (uWS invalidates it once the handler returns), the route
// answers synchronously, and bodies are prebuilt Buffers written in one corked pass.
// POST routes answer once their body has arrived; WebSocket routes (socketRoute.ts)
// are authenticated here and handed to the transport. No exception leaves a handler:
// the unexpected ones become 500 internal_error with a request id, logged, and the
// process keeps serving.
import { STATUS_CODES } from 'node:http';
import { ClientAddresses } from './clientAddress.ts';
import { SystemClock, type Clock } from '../engine/clock.ts';
import { anonymousAuthenticator, apiKeyFrom, keyFromQuery, type Authenticator } from './auth.ts';
import { envelopeFromData, envelopeFromRows } from './envelope.ts';
import { errorBody, HttpError, type ErrorCode, internalError, methodNotAllowed, notFound, STATUS_LINE } from './errors.ts';
import { etagOf, ifNoneMatchHits } from './etag.ts';
import { writeBody } from './largeBody.ts';
import type { RequestObserver } from './metrics.ts';
import { wantsGzip, wantsMsgpack } from './negotiate.ts';
import { openApiRoute } from './openapi.ts';
import { newEntry, selectVariant, VARIANT_CONTENT_TYPE, type CacheEntry, type ResponseCache } from './responseCache.ts';
import { Router, type AnyRoute, type CompiledRoute } from './router.ts';
import type { RouteRequest, RouteResult } from './request.ts';
import type { AnySocketRoute } from './socketRoute.ts';
import { selectTransport, transportChoiceFromEnv } from './transport/selectTransport.ts';
import { UwsTransport } from './transport/uwsTransport.ts';
import type {
  HeaderBlock,
  PlainReply,
  ProtocolFault,
  Transport,
  TransportChoice,
  TransportKind,
  TransportRequest,
  TransportResponse,
  ResponseStreamEvents,
  TransportSocketRoute,
  UpgradeDecision,
} from './transport/transport.ts';
import { RequestIds } from './requestId.ts';

export interface ServerOptions {
  routes: readonly AnyRoute[];
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks an ephemeral port. */
  port?: number;
  /** Without one every request is anonymous and allowed. */
  authenticator?: Authenticator;
  clock?: Clock;
  /** Serve /api/v1/openapi.json built from the routes (default true); extra component schemas may be added. */
  openapi?: boolean | { schemas?: Record<string, unknown> };
  /** WebSocket endpoints (socketRoute.ts). */
  sockets?: readonly AnySocketRoute[];
  /** uws, node, or auto (a native uWS binary when one loads). Default: TRANSPORT from the environment, else auto. */
  transport?: TransportChoice;
  /** Where 500s are logged (default stderr); fields carry the request id. */
  log?: (line: string, fields?: { requestId: string }) => void;
  /** Told of every answered request (metrics, access log). */
  observer?: RequestObserver;
  /**
   * The board sequence the answers reflect (the engine's seq), sent as X-Board-Seq on
   * every data answer, so a client behind a load balancer can tell which state a node
   * served and wait for a node that reached its last one. A cached body still valid
   * at the request reflects the board as it is then, so the seq at answer time is right.
   */
  boardSeq?: () => number;
  /**
   * SO_REUSEPORT: several processes share the port. Default REUSE_PORT=1 from the
   * environment, else off: a second process on a port in use fails to start.
   */
  reusePort?: boolean;
  /** uWS listens on the port itself, without the front (UWS_DIRECT=1): see ListenOptions.uwsDirect. */
  uwsDirect?: boolean;
  /**
   * Reverse proxies whose X-Forwarded-For names the client for the routes that ask for the
   * client's address (clientAddress.ts); default none: the TCP peer is the client.
   */
  trustedProxies?: readonly string[];
}

/** A boolean setting from the environment, read as service/config.ts reads flags (for servers built without the service's config). */
function envFlag(name: string): boolean {
  const value = (process.env[name] ?? '').trim().toLowerCase();
  if (value === '' || value === '0' || value === 'false' || value === 'no' || value === 'off') return false;
  if (value === '1' || value === 'true' || value === 'yes' || value === 'on') return true;
  throw new Error(`${name} must be 1 or 0 (or unset), got ${process.env[name]}`);
}

export interface RunningServer {
  port: number;
  router: Router;
  /** Which transport serves, and why: 'uWebSockets.js 20.57 native', 'node:http (no uWebSockets.js binary for Node 24 / glibc 2.36)'. */
  transport: string;
  transportKind: TransportKind;
  /** Sends to every WebSocket subscribed to topic; false when nobody is. */
  publish(topic: string, message: Buffer | string, isBinary: boolean): boolean;
  close(): Promise<void>;
}

const CORS_ORIGIN: readonly [string, string] = ['Access-Control-Allow-Origin', '*'];
const CORS_EXPOSE: readonly [string, string] = [
  'Access-Control-Expose-Headers',
  'ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id, X-Board-Seq',
];
const ALLOW = 'GET, HEAD, OPTIONS';
const ALLOW_POST = 'POST, OPTIONS';
/** A POST route's body cap unless it says otherwise. */
const DEFAULT_MAX_BODY_BYTES = 1 << 20;
const VARY = 'Accept, Accept-Encoding';
const JSON_TYPE = 'application/json; charset=utf-8';
const NO_HEADERS: [string, string][] = [];
const CORS_HEADERS: readonly (readonly [string, string])[] = [CORS_ORIGIN, CORS_EXPOSE];
/** What every cached variant answers with besides its ETag (and Content-Type on a 200). */
const CACHEABLE_HEADERS: readonly (readonly [string, string])[] = [['Vary', VARY], ['Cache-Control', 'no-cache'], CORS_ORIGIN, CORS_EXPOSE];

/** What the transport parser rejects, answered with the usual error body. */
const FAULTS: Readonly<Record<ProtocolFault, ErrorCode>> = {
  bad_request: 'bad_request',
  uri_too_long: 'uri_too_long',
  header_fields_too_large: 'headers_too_large',
  method_not_allowed: 'method_not_allowed',
  http_version_not_supported: 'http_version_not_supported',
};

/** Status lines are written verbatim ('413 Payload Too Large'). */
function statusLine(status: number): string {
  return STATUS_LINE[status] ?? `${status} ${STATUS_CODES[status] ?? ''}`;
}

/** Everything the handler needs from one request, read before answering. */
interface Exchange {
  res: TransportResponse;
  /** Only during the synchronous handler call (uWS invalidates it afterwards). */
  req: TransportRequest;
  method: string;
  url: string;
  rawQuery: string;
  head: boolean;
  accept: string;
  acceptEncoding: string;
  ifNoneMatch: string;
  lastEventId: string;
  /** X-Forwarded-For, read only when TRUSTED_PROXIES names a proxy (else ''). */
  forwardedFor: string;
  apiKey: string | null;
  now: number;
  authHeaders: [string, string][];
  done: boolean;
  /** Set when the answer closes the connection (a request body left unread). */
  closeConnection: boolean;
  /** The Allow header of a 405: the GET set, or POST on a POST route. */
  allow: string;
  /** X-Request-Id of the answer: the client's, or one made here. */
  requestId: string;
  route: CompiledRoute | null;
  /** Status written, 0 until then. */
  status: number;
  /** The observer's timingStart() at read: a small integer start time for a timed request, else -1. */
  startedAt: number;
}

export async function createServer(options: ServerOptions): Promise<RunningServer> {
  const routes = [...options.routes];
  if (options.openapi !== false) {
    const schemas = typeof options.openapi === 'object' ? options.openapi.schemas : undefined;
    // The document describes the GET API; POST routes are not in it yet.
    routes.push(openApiRoute(options.routes.filter((route) => (route.method ?? 'GET') === 'GET'), schemas));
  }
  const listenOptions = { reusePort: options.reusePort ?? envFlag('REUSE_PORT'), uwsDirect: options.uwsDirect ?? envFlag('UWS_DIRECT') };
  const transport = selectTransport(options.transport ?? transportChoiceFromEnv(), listenOptions.uwsDirect);
  const router = new Router(routes);
  // One facade per transport that serves requests (the uWS transport also serves some
  // through node:http): they share the router and the request ids.
  const requestIds = new RequestIds();
  const facade = new Facade(router, transport, options, requestIds);
  const listening = await transport.listen(
    options.host ?? '127.0.0.1',
    options.port ?? 0,
    (served) => {
      const f = served === transport ? facade : new Facade(router, served, options, requestIds);
      return {
        request: (res, req) => f.onRequest(res, req),
        protocolFault: (fault, detail) => f.protocolFault(fault, detail),
        sockets: (options.sockets ?? []).map((route) => f.socketRoute(route)),
      };
    },
    listenOptions,
  );
  return {
    port: listening.port,
    router: facade.router,
    transport:
      transport.kind !== 'uws'
        ? transport.description
        : listenOptions.uwsDirect
          ? `${transport.description} on the port itself (UWS_DIRECT=1)`
          : transport instanceof UwsTransport && transport.adoption().ok
            ? `${transport.description}, given each connection whose first request it answers right by a front that gives node:http the rest`
            : `${transport.description} behind a front that relays to it the requests it answers right and gives node:http the rest`,
    transportKind: transport.kind,
    publish: (topic, message, isBinary) => listening.publish(topic, message, isBinary),
    close: () => listening.close(),
  };
}

class Facade {
  readonly router: Router;
  private readonly transport: Transport;
  private readonly authenticator: Authenticator;
  private readonly clock: Clock;
  private readonly log: (line: string, fields?: { requestId: string }) => void;
  private readonly corsBlock: HeaderBlock;
  private readonly cacheableBlock: HeaderBlock;
  private readonly observer: RequestObserver | null;
  private readonly requestIds: RequestIds;
  private readonly boardSeq: (() => number) | null;
  private readonly clientAddresses: ClientAddresses;
  /** X-Board-Seq's text for lastSeq: made once per board change, not per answer. */
  private lastSeq = -1;
  private lastSeqText = '';

  constructor(router: Router, transport: Transport, options: ServerOptions, requestIds: RequestIds) {
    this.router = router;
    this.requestIds = requestIds;
    this.transport = transport;
    this.authenticator = options.authenticator ?? anonymousAuthenticator;
    this.clock = options.clock ?? new SystemClock();
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.corsBlock = transport.headerBlock(CORS_HEADERS);
    this.cacheableBlock = transport.headerBlock(CACHEABLE_HEADERS);
    this.observer = options.observer ?? null;
    this.boardSeq = options.boardSeq ?? null;
    this.clientAddresses = new ClientAddresses(options.trustedProxies ?? []);
  }

  /** X-Board-Seq's text now, or null when the server does not know the board. */
  private boardSeqText(): string | null {
    if (this.boardSeq === null) return null;
    const seq = this.boardSeq();
    if (seq !== this.lastSeq) {
      this.lastSeq = seq;
      this.lastSeqText = String(seq);
    }
    return this.lastSeqText;
  }

  /** Writes X-Board-Seq when the server knows the board. */
  private writeBoardSeq(res: TransportResponse): void {
    const text = this.boardSeqText();
    if (text !== null) res.writeHeader('X-Board-Seq', text);
  }

  onRequest(res: TransportResponse, req: TransportRequest): void {
    const x = this.read(res, req);
    try {
      this.answer(x);
    } catch (error) {
      this.fail(x, error);
    }
    this.finish(x);
  }

  /** Tells the observer of an answered request; a pending body tells it when written. */
  private finish(x: Exchange): void {
    if (this.observer !== null && x.status !== 0) this.observer.requestDone(x);
  }

  private read(res: TransportResponse, req: TransportRequest): Exchange {
    const method = req.getMethod();
    return {
      res,
      req,
      method,
      url: req.getUrl(),
      rawQuery: req.getQuery() ?? '',
      head: method === 'head',
      accept: req.getHeader('accept'),
      acceptEncoding: req.getHeader('accept-encoding'),
      ifNoneMatch: req.getHeader('if-none-match'),
      lastEventId: req.getHeader('last-event-id'),
      // read only when some proxy is trusted: most deployments never pay for the header
      forwardedFor: this.clientAddresses.none ? '' : req.getHeader('x-forwarded-for'),
      apiKey: apiKeyFrom(req.getHeader('x-api-key'), req.getHeader('authorization')),
      now: 0,
      authHeaders: NO_HEADERS,
      done: false,
      closeConnection: false,
      allow: ALLOW,
      requestId: this.requestIds.next(req.getHeader('x-request-id')),
      route: null,
      status: 0,
      startedAt: this.observer === null ? -1 : this.observer.timingStart(),
    };
  }

  private answer(x: Exchange): void {
    if (x.method === 'options') return this.writePreflight(x);
    if (x.method === 'post') return this.answerPost(x);
    if (x.method !== 'get' && x.method !== 'head') return this.writeError(x, methodNotAllowed(x.method));
    const match = this.router.match(x.url);
    if (match === null) return this.writeError(x, notFound(`no such path: ${x.url}`));
    x.route = match.route;
    if (match.route.def.method === 'POST') {
      x.allow = ALLOW_POST;
      return this.writeError(x, postOnly(x.method));
    }
    if (x.apiKey === null && match.route.def.keyParam === true) x.apiKey = keyFromQuery(x.rawQuery);
    if (!this.authenticate(x, match.route)) return;
    if (match.route.cache !== null) this.serveCached(x, match.route, match.route.cache, match.params);
    else this.serveFresh(x, match.route, match.params);
  }

  /** false when the authenticator refused (the error is written). */
  private authenticate(x: Exchange, route: CompiledRoute): boolean {
    x.now = this.clock.now();
    if (route.def.authenticate === false) return true;
    const auth = this.authenticator.check(x.apiKey, route.def.auth, x.now);
    if (!auth.ok) {
      if (auth.retryAfter !== undefined) x.authHeaders = [['Retry-After', String(auth.retryAfter)]];
      this.writeError(x, new HttpError(auth.code, auth.detail));
      return false;
    }
    x.authHeaders = auth.headers;
    return true;
  }

  /**
   * A POST route answers once its whole body is read (at most maxBodyBytes: a declared
   * Content-Length over it answers 413 at once, a body that grows past it as soon as it
   * does; either way the connection closes, since the rest of the body is not read).
   */
  private answerPost(x: Exchange): void {
    const match = this.router.match(x.url);
    if (match === null || match.route.def.method !== 'POST') return this.writeError(x, methodNotAllowed(x.method));
    const route = match.route;
    const maxBytes = route.def.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const declared = x.req.getHeader('content-length');
    // A malformed Content-Length never gets here (both parsers reject it); a chunked body has none.
    const tooLarge = route.def.tooLarge ?? payloadTooLarge;
    if (declared !== '' && Number(declared) > maxBytes) return this.writeError(x, tooLarge(maxBytes), true);
    if (!this.authenticate(x, route)) return;
    const contentType = mediaType(x.req.getHeader('content-type'));
    const accepted = route.def.contentTypes;
    if (accepted !== undefined && !accepted.includes(contentType)) {
      return this.writeError(x, new HttpError('unsupported_media_type', `Content-Type must be one of ${accepted.join(', ')}, got ${contentType === '' ? 'none' : contentType}`), true);
    }
    x.done = true;
    this.transport.readBody(x.res, maxBytes, (result) => {
      if (!result.ok) {
        if (result.reason === 'too_large') this.writeError(x, tooLarge(maxBytes), true);
        return;
      }
      x.done = false;
      try {
        const parsed = route.parser.parse(x.rawQuery);
        const request: RouteRequest = { path: x.url, params: match.params, query: parsed.values, warnings: parsed.warnings, apiKey: x.apiKey, now: x.now, body: result.body, contentType };
        const answer = route.def.handle(request);
        if (answer.kind === 'large') return this.writeLarge(x, answer);
        if (answer.kind === 'pending') return this.writePending(x, answer, request);
        if (answer.kind === 'stream') return this.writeStream(x, answer);
        this.writeEntry(x, null, entryOf(request, 0, answer));
      } catch (error) {
        this.fail(x, error);
      }
    });
  }

  /** The transport's side of a WebSocket route: the handshake is authenticated like any request. */
  socketRoute(def: AnySocketRoute): TransportSocketRoute {
    return {
      path: def.path,
      maxPayloadBytes: def.maxPayloadBytes ?? 64 * 1024,
      maxBackpressureBytes: def.maxBackpressureBytes ?? 1 << 20,
      idleTimeoutSeconds: def.idleTimeoutSeconds ?? 120,
      handlers: def,
      upgrade: (req, remoteAddress) => this.upgrade(def, req, remoteAddress),
    };
  }

  private upgrade(def: AnySocketRoute, req: TransportRequest, peerAddress: string): UpgradeDecision {
    const path = req.getUrl();
    const remoteAddress = this.clientAddresses.none ? peerAddress : this.clientAddresses.resolve(peerAddress, req.getHeader('x-forwarded-for'));
    const query = req.getQuery() ?? '';
    // Browsers cannot set headers on a WebSocket: the key may come as the `key` parameter.
    const apiKey = apiKeyFrom(req.getHeader('x-api-key'), req.getHeader('authorization')) ?? keyFromQuery(query);
    const now = this.clock.now();
    try {
      const auth = this.authenticator.check(apiKey, def.auth, now);
      if (!auth.ok) {
        const headers: [string, string][] = auth.retryAfter === undefined ? [] : [['Retry-After', String(auth.retryAfter)]];
        return { accept: false, reply: this.plainError(new HttpError(auth.code, auth.detail), headers) };
      }
      return { accept: true, data: def.accept({ path, query, apiKey, now, remoteAddress }) };
    } catch (error) {
      if (error instanceof HttpError) return { accept: false, reply: this.plainError(error) };
      const requestId = this.logFailure('UPGRADE', `${path}${query === '' ? '' : `?${query}`}`, error);
      return { accept: false, reply: this.plainError(internalError(requestId), [['X-Request-Id', requestId]]) };
    }
  }

  /** The answer to a request the transport's parser rejected. */
  protocolFault(fault: ProtocolFault, detail: string): PlainReply {
    return this.plainError(new HttpError(FAULTS[fault], detail));
  }

  private plainError(error: HttpError, extra: readonly (readonly [string, string])[] = []): PlainReply {
    const headers: (readonly [string, string])[] = [['Content-Type', JSON_TYPE], ...CORS_HEADERS, ...extra];
    if (error.code === 'method_not_allowed') headers.push(['Allow', ALLOW]);
    return { status: statusLine(error.status), headers, body: errorBody(error) };
  }

  private serveFresh(x: Exchange, route: CompiledRoute, params: Record<string, string>): void {
    const request = this.parse(x, route, params);
    const result = route.def.handle(request);
    if (result.kind === 'large') return this.writeLarge(x, result);
    if (result.kind === 'pending') return this.writePending(x, result, request);
    if (result.kind === 'stream') return this.writeStream(x, result);
    this.writeEntry(x, null, entryOf(request, 0, result));
  }

  /** An open-ended body: status and headers now, then whatever the route writes over time. */
  private writeStream(x: Exchange, result: Extract<RouteResult, { kind: 'stream' }>): void {
    const res = x.res;
    x.done = true;
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', result.contentType).writeHeader('Cache-Control', 'no-cache').writeHeader('X-Accel-Buffering', 'no');
      this.writeBoardSeq(res);
      this.writeCommonHeaders(x);
      if (x.head) {
        res.endWithoutBody();
        return;
      }
      let events: ResponseStreamEvents | null = null;
      const stream = this.transport.openStream(res, {
        drained: () => events?.drained(),
        closed: () => events?.closed(),
      });
      events = result.open(stream);
    });
  }

  /**
   * Fast path: the raw path+query finds the entry without parsing; the route's
   * validity token says whether its body still holds. Otherwise the canonical
   * request finds an entry another spelling built, or a new one is made.
   */
  private serveCached(x: Exchange, route: CompiledRoute, cache: ResponseCache<RouteRequest>, params: Record<string, string>): void {
    const rawKey = x.rawQuery === '' ? x.url : `${x.url}?${x.rawQuery}`;
    let entry = cache.get(rawKey);
    if (entry === undefined) {
      const request = this.parse(x, route, params);
      const canonicalKey = `${route.def.path}\u0000${JSON.stringify(params)}\u0000${request.canonical}`;
      entry = cache.get(canonicalKey);
      if (entry === undefined) {
        const token = route.def.cache!.validity(request, x.now);
        const result = route.def.handle(request);
        if (result.kind === 'large') return this.writeLarge(x, result);
        if (result.kind === 'pending') return this.writePending(x, result, request);
        if (result.kind === 'stream') return this.writeStream(x, result);
        entry = entryOf(request, token, result);
        cache.set(canonicalKey, entry);
        cache.set(rawKey, entry);
        return this.writeEntry(x, cache, entry);
      }
      cache.set(rawKey, entry);
    }
    const token = route.def.cache!.validity(entry.request, x.now);
    if (token !== entry.token) {
      const request: RouteRequest = { ...entry.request, now: x.now, apiKey: x.apiKey };
      const result = route.def.handle(request);
      if (result.kind === 'large') return this.writeLarge(x, result);
      if (result.kind === 'pending') return this.writePending(x, result, request);
      if (result.kind === 'stream') return this.writeStream(x, result);
      cache.refresh(entry, token, bodyOf(result, request.warnings));
      weakEtag(entry, result, request.warnings);
    }
    this.writeEntry(x, cache, entry);
  }

  private parse(x: Exchange, route: CompiledRoute, params: Record<string, string>): RouteRequest & { canonical: string } {
    const parsed = route.parser.parse(x.rawQuery);
    const request: RouteRequest & { canonical: string } = { path: x.url, params, query: parsed.values, warnings: parsed.warnings, apiKey: x.apiKey, now: x.now, lastEventId: x.lastEventId, canonical: parsed.canonical };
    if (route.def.peerAddress === true) request.remoteAddress = this.clientAddresses.resolve(this.transport.peerAddress(x.res), x.forwardedFor);
    return request;
  }

  private writeEntry(x: Exchange, cache: ResponseCache<RouteRequest> | null, entry: CacheEntry<RouteRequest>): void {
    const msgpack = wantsMsgpack(x.accept);
    const gzip = wantsGzip(x.acceptEncoding);
    const variant = cache === null ? selectVariant(entry, msgpack, gzip) : cache.select(entry, msgpack, gzip);
    const etag = entry.etags[variant]!;
    const res = x.res;
    x.done = true;
    res.cork(() => {
      if (ifNoneMatchHits(x.ifNoneMatch, etag)) {
        x.status = 304;
        res.writeStatus('304 Not Modified').writeHeader('ETag', etag);
        this.writeBoardSeq(res);
        this.writeCommonHeaders(x, this.cacheableBlock);
        res.endWithoutBody();
        return;
      }
      x.status = 200;
      const bytes = entry.bytes[variant]!;
      res.writeHeader('Content-Type', VARIANT_CONTENT_TYPE[variant]!);
      if ((variant & 1) === 1) res.writeHeader('Content-Encoding', 'gzip');
      res.writeHeader('ETag', etag);
      this.writeBoardSeq(res);
      this.writeCommonHeaders(x, this.cacheableBlock);
      this.end(x, bytes);
    });
  }

  private writeLarge(x: Exchange, result: Extract<RouteResult, { kind: 'large' }>): void {
    const res = x.res;
    x.done = true;
    if (ifNoneMatchHits(x.ifNoneMatch, result.etag)) {
      x.status = 304;
      res.cork(() => {
        res.writeStatus('304 Not Modified').writeHeader('ETag', result.etag);
        if (result.boardSeq !== undefined) res.writeHeader('X-Board-Seq', String(result.boardSeq));
        else this.writeBoardSeq(res);
        this.writeCommonHeaders(x);
        res.endWithoutBody();
      });
      return;
    }
    x.status = 200;
    const headers: [string, string][] = [['Content-Type', result.contentType], ['ETag', result.etag], ['Cache-Control', result.cacheControl ?? 'no-cache'], CORS_ORIGIN as [string, string], CORS_EXPOSE as [string, string], ['X-Request-Id', x.requestId], ...x.authHeaders];
    if (result.contentEncoding !== undefined) headers.push(['Content-Encoding', result.contentEncoding]);
    if (result.boardSeq !== undefined) headers.push(['X-Board-Seq', String(result.boardSeq)]);
    else {
      const text = this.boardSeqText();
      if (text !== null) headers.push(['X-Board-Seq', text]);
    }
    if (x.head) {
      let length = 0;
      for (const chunk of result.chunks) length += chunk.length;
      res.cork(() => {
        for (const [name, value] of headers) res.writeHeader(name, value);
        res.writeHeader('Content-Length', String(length)).endWithoutBody();
      });
      return;
    }
    res.cork(() => writeBody(this.transport, res, result.chunks, { status: '200 OK', headers }));
  }

  /** Keeps the request open until the body is ready; the client may leave meanwhile. */
  private writePending(x: Exchange, pending: Extract<RouteResult, { kind: 'pending' }>, request: RouteRequest): void {
    let aborted = false;
    x.done = true;
    x.res.onAborted(() => {
      aborted = true;
    });
    const settle = (write: () => void): void => {
      if (aborted) return;
      try {
        write();
      } catch (error) {
        this.fail(x, error);
      }
      this.finish(x);
    };
    pending.body.then(
      (result) => {
        if (result.kind === 'stream') {
          // an open-ended body writes and finishes itself
          if (!aborted) this.writeStream(x, result);
          return;
        }
        settle(() => (result.kind === 'document' ? this.writeEntry(x, null, newEntry(request, 0, result.body)) : result.kind === 'data' || result.kind === 'rows' ? this.writeEntry(x, null, entryOf(request, 0, result)) : this.writeLarge(x, result)));
      },
      (error: unknown) =>
        settle(() => {
          x.done = false;
          this.fail(x, error);
        }),
    );
  }

  private writePreflight(x: Exchange): void {
    // A POST route's preflight allows POST and a body type; every other path the GET set.
    const post = this.router.match(x.url)?.route.def.method === 'POST';
    const allow = post ? ALLOW_POST : ALLOW;
    x.done = true;
    x.status = 204;
    x.res.cork(() => {
      x.res
        .writeStatus('204 No Content')
        .writeHeader(CORS_ORIGIN[0], CORS_ORIGIN[1])
        .writeHeader('Access-Control-Allow-Methods', allow)
        .writeHeader('Access-Control-Allow-Headers', post ? 'X-Api-Key, Authorization, Content-Type' : 'X-Api-Key, Authorization, If-None-Match, Accept')
        .writeHeader('Access-Control-Max-Age', '86400')
        .writeHeader('Allow', allow)
        .writeHeader('X-Request-Id', x.requestId)
        .endWithoutBody();
    });
  }

  private writeError(x: Exchange, error: HttpError, closeConnection = false): void {
    const res = x.res;
    const body = errorBody(error);
    x.done = true;
    x.status = error.status;
    x.closeConnection = closeConnection;
    res.cork(() => {
      res.writeStatus(statusLine(error.status)).writeHeader('Content-Type', JSON_TYPE);
      if (error.code === 'method_not_allowed') res.writeHeader('Allow', x.allow);
      this.writeCommonHeaders(x);
      this.end(x, body);
    });
  }

  /** CORS and the request id (in `block`, one call) plus whatever the authenticator added (rate-limit headers, Retry-After). */
  private writeCommonHeaders(x: Exchange, block: HeaderBlock = this.corsBlock): void {
    this.transport.writeHeaderBlock(x.res, block, 'X-Request-Id', x.requestId);
    for (let i = 0; i < x.authHeaders.length; i++) x.res.writeHeader(x.authHeaders[i]![0], x.authHeaders[i]![1]);
  }

  /** HEAD: the same headers and Content-Length, no body (uWS would send one with end()). */
  private end(x: Exchange, bytes: Buffer): void {
    if (x.head) x.res.writeHeader('Content-Length', String(bytes.length)).endWithoutBody();
    else x.res.end(bytes, x.closeConnection);
  }

  private fail(x: Exchange, error: unknown): void {
    if (error instanceof HttpError) {
      if (!x.done) this.writeError(x, error);
      return;
    }
    const requestId = x.requestId;
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.log(`[http] internal_error ${requestId} ${x.method.toUpperCase()} ${x.url}${x.rawQuery === '' ? '' : `?${x.rawQuery}`}: ${text}`, { requestId });
    if (x.done) return;
    try {
      this.writeError(x, internalError(requestId));
    } catch (writeFailure) {
      this.log(`[http] ${requestId}: could not answer: ${String(writeFailure)}`, { requestId });
    }
  }

  /** Logs an unexpected error with a new request id, and returns the id. */
  private logFailure(method: string, target: string, error: unknown): string {
    const requestId = this.requestIds.next('');
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.log(`[http] internal_error ${requestId} ${method} ${target}: ${text}`);
    return requestId;
  }
}

function payloadTooLarge(maxBytes: number): HttpError {
  return new HttpError('payload_too_large', `the request body is larger than ${maxBytes} bytes`);
}

/** 'application/x-ndjson' of 'Application/X-NDJSON; charset=utf-8'. */
function mediaType(header: string): string {
  const semicolon = header.indexOf(';');
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** method_not_allowed for GET/HEAD on a POST route. */
function postOnly(method: string): HttpError {
  return methodNotAllowed(method, 'POST');
}

/** A result's cache entry: its body, with the ETag weakEtag gives it. */
function entryOf(request: RouteRequest, token: number, result: Exclude<RouteResult, { kind: 'large' | 'pending' | 'stream' }>): CacheEntry<RouteRequest> {
  const entry = newEntry<RouteRequest>(request, token, bodyOf(result, request.warnings));
  weakEtag(entry, result, request.warnings);
  return entry;
}

/**
 * A DataResult with validatorData (records carrying a field that moves with the clock
 * alone, a fair line's quote ages) gets a weak ETag: the digest of the envelope of
 * those records instead of the body's bytes, so a client holding the page revalidates
 * it with a 304 while its records are the same (RFC 9110 8.8.1: semantically equivalent).
 */
function weakEtag(entry: CacheEntry<RouteRequest>, result: Exclude<RouteResult, { kind: 'large' | 'pending' | 'stream' }>, warnings: readonly string[]): void {
  if (result.kind !== 'data' || result.validatorData === undefined) return;
  const meta = { updated: result.updated, nextCursor: result.nextCursor ?? null, note: result.note, warnings };
  entry.etags[0] = `W/${etagOf(envelopeFromData(result.validatorData, meta))}`;
  entry.etags[1] = entry.etags[2] = entry.etags[3] = null;
}

function bodyOf(result: Exclude<RouteResult, { kind: 'large' | 'pending' | 'stream' }>, warnings: readonly string[]): Buffer {
  switch (result.kind) {
    case 'rows':
      return envelopeFromRows(result.rows, { count: result.count, updated: result.updated, nextCursor: result.nextCursor ?? null, note: result.note, warnings });
    case 'data':
      return envelopeFromData(result.data, { updated: result.updated, nextCursor: result.nextCursor ?? null, note: result.note, warnings });
    case 'document':
      return result.body;
  }
}
