// The HTTP facade over uWebSockets.js. One catch-all handler: everything is read
// from the uWS request synchronously (it is invalid once the handler returns), the
// route answers synchronously, and bodies are prebuilt Buffers written in one corked
// pass. No exception leaves the handler: the unexpected ones become 500
// internal_error with a request id, logged, and the process keeps serving.
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, us_listen_socket } from 'uWebSockets.js';
import { SystemClock, type Clock } from '../engine/clock.ts';
import { anonymousAuthenticator, apiKeyFrom, type Authenticator } from './auth.ts';
import { envelopeFromData, envelopeFromRows } from './envelope.ts';
import { errorBody, HttpError, internalError, methodNotAllowed, notFound, statusLine } from './errors.ts';
import { ifNoneMatchHits } from './etag.ts';
import { writeBody } from './largeBody.ts';
import { wantsGzip, wantsMsgpack } from './negotiate.ts';
import { openApiRoute } from './openapi.ts';
import { newEntry, selectVariant, VARIANT_CONTENT_TYPE, type CacheEntry, type ResponseCache } from './responseCache.ts';
import { Router, type AnyRoute, type CompiledRoute } from './router.ts';
import type { RouteRequest, RouteResult } from './request.ts';

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
  /** Where 500s are logged (default stderr). */
  log?: (line: string) => void;
}

export interface RunningServer {
  port: number;
  router: Router;
  close(): Promise<void>;
}

const CORS_ORIGIN: readonly [string, string] = ['Access-Control-Allow-Origin', '*'];
const CORS_EXPOSE: readonly [string, string] = [
  'Access-Control-Expose-Headers',
  'ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
];
const ALLOW = 'GET, HEAD, OPTIONS';
const VARY = 'Accept, Accept-Encoding';
const JSON_TYPE = 'application/json; charset=utf-8';
const NO_HEADERS: [string, string][] = [];

/**
 * Headers that never change, as one writeHeader call: uWS writes each call as
 * `name: value\r\n`, and every call crosses into C++, which is a measurable share of a
 * 304 (a 304 with two calls fewer served ~6% more requests/s here). The first header's
 * value carries the others as CRLF-joined lines; the bytes on the wire are the same.
 */
function headerBlock(headers: readonly (readonly [string, string])[]): readonly [string, string] {
  let value = headers[0]![1];
  for (let i = 1; i < headers.length; i++) value += `\r\n${headers[i]![0]}: ${headers[i]![1]}`;
  return [headers[0]![0], value];
}

const CORS_BLOCK = headerBlock([CORS_ORIGIN, CORS_EXPOSE]);
/** What every cached variant answers with besides its ETag (and Content-Type on a 200). */
const CACHEABLE_BLOCK = headerBlock([['Vary', VARY], ['Cache-Control', 'no-cache'], CORS_ORIGIN, CORS_EXPOSE]);

/** Everything the handler needs from one request, read before answering. */
interface Exchange {
  res: HttpResponse;
  method: string;
  url: string;
  rawQuery: string;
  head: boolean;
  accept: string;
  acceptEncoding: string;
  ifNoneMatch: string;
  apiKey: string | null;
  now: number;
  authHeaders: [string, string][];
  done: boolean;
}

export async function createServer(options: ServerOptions): Promise<RunningServer> {
  const routes = [...options.routes];
  if (options.openapi !== false) {
    const schemas = typeof options.openapi === 'object' ? options.openapi.schemas : undefined;
    routes.push(openApiRoute(options.routes, schemas));
  }
  const facade = new Facade(new Router(routes), options);
  const app = uWS.App();
  app.any('/*', (res, req) => facade.onRequest(res, req));
  return new Promise((resolve, reject) => {
    app.listen(options.host ?? '127.0.0.1', options.port ?? 0, (listenSocket: us_listen_socket | false) => {
      if (listenSocket === false) {
        reject(new Error(`cannot listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 0}`));
        return;
      }
      let closed = false;
      resolve({
        port: uWS.us_socket_local_port(listenSocket),
        router: facade.router,
        close: async () => {
          if (closed) return;
          closed = true;
          uWS.us_listen_socket_close(listenSocket);
          // Also drops open keep-alive connections so the process can exit (present in
          // this uWS build, missing from its typings).
          (app as unknown as { close(): void }).close();
        },
      });
    });
  });
}

class Facade {
  readonly router: Router;
  private readonly authenticator: Authenticator;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private requestCount = 0;

  constructor(router: Router, options: ServerOptions) {
    this.router = router;
    this.authenticator = options.authenticator ?? anonymousAuthenticator;
    this.clock = options.clock ?? new SystemClock();
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  onRequest(res: HttpResponse, req: HttpRequest): void {
    const x = this.read(res, req);
    try {
      this.answer(x);
    } catch (error) {
      this.fail(x, error);
    }
  }

  private read(res: HttpResponse, req: HttpRequest): Exchange {
    const method = req.getMethod();
    return {
      res,
      method,
      url: req.getUrl(),
      rawQuery: req.getQuery() ?? '',
      head: method === 'head',
      accept: req.getHeader('accept'),
      acceptEncoding: req.getHeader('accept-encoding'),
      ifNoneMatch: req.getHeader('if-none-match'),
      apiKey: apiKeyFrom(req.getHeader('x-api-key'), req.getHeader('authorization')),
      now: 0,
      authHeaders: NO_HEADERS,
      done: false,
    };
  }

  private answer(x: Exchange): void {
    if (x.method === 'options') return this.writePreflight(x);
    if (x.method !== 'get' && x.method !== 'head') return this.writeError(x, methodNotAllowed(x.method));
    const match = this.router.match(x.url);
    if (match === null) return this.writeError(x, notFound(`no such path: ${x.url}`));
    x.now = this.clock.now();
    if (match.route.def.authenticate !== false) {
      const auth = this.authenticator.check(x.apiKey, match.route.def.auth, x.now);
      if (!auth.ok) {
        const error = new HttpError(auth.status, auth.code, auth.detail);
        if (auth.retryAfter !== undefined) x.authHeaders = [['Retry-After', String(auth.retryAfter)]];
        return this.writeError(x, error);
      }
      x.authHeaders = auth.headers;
    }
    if (match.route.cache !== null) this.serveCached(x, match.route, match.route.cache, match.params);
    else this.serveFresh(x, match.route, match.params);
  }

  private serveFresh(x: Exchange, route: CompiledRoute, params: Record<string, string>): void {
    const request = this.parse(x, route, params);
    const result = route.def.handle(request);
    if (result.kind === 'large') return this.writeLarge(x, result);
    if (result.kind === 'pending') return this.writePending(x, result);
    this.writeEntry(x, null, newEntry(request, 0, bodyOf(result, request.warnings)));
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
        if (result.kind === 'pending') return this.writePending(x, result);
        entry = newEntry<RouteRequest>(request, token, bodyOf(result, request.warnings));
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
      if (result.kind === 'pending') return this.writePending(x, result);
      cache.refresh(entry, token, bodyOf(result, request.warnings));
    }
    this.writeEntry(x, cache, entry);
  }

  private parse(x: Exchange, route: CompiledRoute, params: Record<string, string>): RouteRequest & { canonical: string } {
    const parsed = route.parser.parse(x.rawQuery);
    return { path: x.url, params, query: parsed.values, warnings: parsed.warnings, apiKey: x.apiKey, now: x.now, canonical: parsed.canonical };
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
        res.writeStatus('304 Not Modified').writeHeader('ETag', etag);
        this.writeCommonHeaders(x, CACHEABLE_BLOCK);
        res.endWithoutBody();
        return;
      }
      const bytes = entry.bytes[variant]!;
      res.writeHeader('Content-Type', VARIANT_CONTENT_TYPE[variant]!);
      if ((variant & 1) === 1) res.writeHeader('Content-Encoding', 'gzip');
      res.writeHeader('ETag', etag);
      this.writeCommonHeaders(x, CACHEABLE_BLOCK);
      this.end(x, bytes);
    });
  }

  private writeLarge(x: Exchange, result: Extract<RouteResult, { kind: 'large' }>): void {
    const res = x.res;
    x.done = true;
    if (ifNoneMatchHits(x.ifNoneMatch, result.etag)) {
      res.cork(() => {
        res.writeStatus('304 Not Modified').writeHeader('ETag', result.etag);
        this.writeCommonHeaders(x);
        res.endWithoutBody();
      });
      return;
    }
    const headers: [string, string][] = [['Content-Type', result.contentType], ['ETag', result.etag], ['Cache-Control', result.cacheControl ?? 'no-cache'], CORS_ORIGIN as [string, string], CORS_EXPOSE as [string, string], ...x.authHeaders];
    if (result.contentEncoding !== undefined) headers.push(['Content-Encoding', result.contentEncoding]);
    if (x.head) {
      let length = 0;
      for (const chunk of result.chunks) length += chunk.length;
      res.cork(() => {
        for (const [name, value] of headers) res.writeHeader(name, value);
        res.writeHeader('Content-Length', String(length)).endWithoutBody();
      });
      return;
    }
    res.cork(() => writeBody(res, result.chunks as Buffer[], { status: '200 OK', headers }));
  }

  /** Keeps the request open until the body is ready; the client may leave meanwhile. */
  private writePending(x: Exchange, pending: Extract<RouteResult, { kind: 'pending' }>): void {
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
    };
    pending.body.then(
      (result) => settle(() => this.writeLarge(x, result)),
      (error: unknown) =>
        settle(() => {
          x.done = false;
          this.fail(x, error);
        }),
    );
  }

  private writePreflight(x: Exchange): void {
    x.done = true;
    x.res.cork(() => {
      x.res
        .writeStatus('204 No Content')
        .writeHeader(CORS_ORIGIN[0], CORS_ORIGIN[1])
        .writeHeader('Access-Control-Allow-Methods', ALLOW)
        .writeHeader('Access-Control-Allow-Headers', 'X-Api-Key, Authorization, If-None-Match, Accept')
        .writeHeader('Access-Control-Max-Age', '86400')
        .writeHeader('Allow', ALLOW)
        .endWithoutBody();
    });
  }

  private writeError(x: Exchange, error: HttpError, requestId?: string): void {
    const res = x.res;
    const body = errorBody(error);
    x.done = true;
    res.cork(() => {
      res.writeStatus(statusLine(error.status)).writeHeader('Content-Type', JSON_TYPE);
      if (error.status === 405) res.writeHeader('Allow', ALLOW);
      if (requestId !== undefined) res.writeHeader('X-Request-Id', requestId);
      this.writeCommonHeaders(x);
      this.end(x, body);
    });
  }

  /** CORS (in `block`, one call) plus whatever the authenticator added (rate-limit headers, Retry-After). */
  private writeCommonHeaders(x: Exchange, block: readonly [string, string] = CORS_BLOCK): void {
    x.res.writeHeader(block[0], block[1]);
    for (let i = 0; i < x.authHeaders.length; i++) x.res.writeHeader(x.authHeaders[i]![0], x.authHeaders[i]![1]);
  }

  /** HEAD: the same headers and Content-Length, no body (uWS would send one with end()). */
  private end(x: Exchange, bytes: Buffer): void {
    if (x.head) x.res.writeHeader('Content-Length', String(bytes.length)).endWithoutBody();
    else x.res.end(bytes);
  }

  private fail(x: Exchange, error: unknown): void {
    if (error instanceof HttpError) {
      if (!x.done) this.writeError(x, error);
      return;
    }
    const requestId = `${process.pid.toString(36)}-${(++this.requestCount).toString(36)}`;
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.log(`[http] internal_error ${requestId} ${x.method.toUpperCase()} ${x.url}${x.rawQuery === '' ? '' : `?${x.rawQuery}`}: ${text}`);
    if (x.done) return;
    try {
      this.writeError(x, internalError(requestId), requestId);
    } catch (writeFailure) {
      this.log(`[http] ${requestId}: could not answer: ${String(writeFailure)}`);
    }
  }
}

function bodyOf(result: Exclude<RouteResult, { kind: 'large' | 'pending' }>, warnings: readonly string[]): Buffer {
  switch (result.kind) {
    case 'rows':
      return envelopeFromRows(result.rows, { count: result.count, updated: result.updated, nextCursor: result.nextCursor ?? null, note: result.note, warnings });
    case 'data':
      return envelopeFromData(result.data, { updated: result.updated, nextCursor: result.nextCursor ?? null, note: result.note, warnings });
    case 'document':
      return result.body;
  }
}
