// Routes declared as data, matched by walking a segment trie (literal segments before
// parameters) with indexOf: no regular expressions on the request path.
//
//   const eventOdds = defineRoute({
//     path: '/api/v1/events/:eventId/odds',
//     auth: 'key',                       // 'key': designated as needing a key
//     response: 'OddsRow',               // component schema of one data item (openapiSchemas.ts)
//     query: [{ name: 'odds_format', kind: 'enum', values: FORMATS, default: 'all' }, { name: 'is_main', kind: 'boolean', default: false }],
//     cache: { validity: (req) => engine.odds.version(filterOf(req)) },
//     handle(req) {                      // req.query is typed from the list above
//       if (!engine.hasEvent(req.params.eventId!)) throw notFound(`no event ${req.params.eventId}`);
//       const page = engine.odds.page(filterOf(req), null, 1_000_000);
//       return { kind: 'rows', rows: engine.odds.render(page, req.query.odds_format), count: page.count, updated: page.maxUpdated };
//     },
//   });
//   await createServer({ routes: [eventOdds], host: '0.0.0.0', port: 8080, authenticator });
import type { HttpError } from './errors.ts';
import { QueryParser } from './params.ts';
import { ResponseCache } from './responseCache.ts';
import type { ParamDef, QueryOf } from './schemas.ts';
import type { RouteRequest, RouteResult } from './request.ts';

/** Reference endpoints need no key; all others are designated 'key' (x-auth-designation in the OpenAPI description). */
export type RouteAuth = 'none' | 'key';

/** How the 200 body is shaped, for the OpenAPI document. */
export type ResponseKind = 'envelope' | 'document' | 'gzip-json' | 'event-stream' | 'parquet';

export interface RouteCacheOptions<Q> {
  /**
   * A cheap number that changes whenever the response to this request could change
   * (e.g. the engine's version of the list the query reads). Called on every
   * request, with the request that built the cached entry.
   */
  validity(req: RouteRequest<Q>, now: number): number;
  /**
   * Cache keys kept (LRU): each spelling of a request seen is one key and each
   * canonical request one more, all pointing at shared entries. Default 1024.
   */
  capacity?: number;
  /** Bytes kept across entries and their variants. Default 64 MiB. */
  maxBytes?: number;
}

export interface RouteDef<Q extends readonly ParamDef[] = readonly ParamDef[]> {
  /** e.g. '/api/v1/events/:eventId/odds' */
  path: string;
  /**
   * GET (default: also HEAD) or POST. A POST route gets the request body in req.body,
   * read whole before handle runs; it is never cached.
   */
  method?: 'GET' | 'POST';
  /** POST only: the largest body accepted; a bigger one answers 413 payload_too_large. Default 1 MiB. */
  maxBodyBytes?: number;
  /** POST only: the 413 to answer instead of payload_too_large (a route that names its own cap). */
  tooLarge?: (maxBytes: number) => HttpError;
  /**
   * POST only: the media types the body may have (without parameters, lower case); any
   * other Content-Type answers 415 unsupported_media_type before the body is read.
   * Default: any.
   */
  contentTypes?: readonly string[];
  auth: RouteAuth;
  query: Q;
  /** OpenAPI component schema name: of each data item (envelope) or of the whole body. */
  response: string;
  responseKind?: ResponseKind;
  summary?: string;
  description?: string;
  /** false: left out of the OpenAPI document (the web pages and their assets are not API). Default true. */
  documented?: boolean;
  /**
   * The query parameter whose value names a thing that may not exist (an event id): the
   * route then answers 404 not_found, and the OpenAPI document declares it. Routes with
   * path parameters declare 404 anyway.
   */
  notFoundParam?: string;
  /**
   * false: the facade does not call the authenticator for this route, so it never
   * answers 401/429, counts nothing and adds no X-RateLimit headers; the route reads
   * req.apiKey itself. Only for /account/usage, which must never error (an unknown
   * or revoked key answers the anonymous plan). Default true.
   */
  authenticate?: boolean;
  /**
   * true: without an X-Api-Key or Bearer header, the key may come as the `key` query
   * parameter (declare it in `query`), for clients that cannot set headers (a
   * browser's EventSource). Default false.
   */
  keyParam?: boolean;
  /**
   * true: req.remoteAddress carries the client's address (for per-address limits). Read
   * only where declared: it is a call into the transport per request. Default false.
   */
  peerAddress?: boolean;
  /** Opt-in response cache; only for responses that depend on nothing but path and query. */
  cache?: RouteCacheOptions<QueryOf<Q>>;
  handle(req: RouteRequest<QueryOf<Q>>): RouteResult;
}

/** Declares a route with its query type inferred from the parameter list. */
export function defineRoute<const Q extends readonly ParamDef[]>(route: RouteDef<Q>): RouteDef<Q> {
  return route;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any>;

export interface CompiledRoute {
  def: AnyRoute;
  /**
   * Position in its Router's routes, fixed at compile time: lets a per-route table (the
   * request metrics) find its row with an array index instead of a lookup keyed by the
   * route object on every request.
   */
  index: number;
  parser: QueryParser;
  paramNames: readonly string[];
  cache: ResponseCache<RouteRequest> | null;
}

interface TrieNode {
  literal: Map<string, TrieNode>;
  param: TrieNode | null;
  route: CompiledRoute | null;
}

function newNode(): TrieNode {
  return { literal: new Map(), param: null, route: null };
}

export interface RouteMatch {
  route: CompiledRoute;
  params: Record<string, string>;
}

export class Router {
  readonly routes: readonly CompiledRoute[];
  private readonly root = newNode();
  private readonly values: string[] = [];

  constructor(defs: readonly AnyRoute[]) {
    this.routes = defs.map((def, index) => this.add(def, index));
  }

  private add(def: AnyRoute, index: number): CompiledRoute {
    if (!def.path.startsWith('/')) throw new Error(`route path must start with '/': ${def.path}`);
    const paramNames: string[] = [];
    let node = this.root;
    for (const segment of def.path.slice(1).split('/')) {
      if (segment.startsWith(':')) {
        paramNames.push(segment.slice(1));
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.literal.get(segment);
        if (next === undefined) node.literal.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.route !== null) throw new Error(`duplicate route ${def.path}`);
    const cache = def.cache === undefined ? null : new ResponseCache<RouteRequest>(def.cache.capacity, def.cache.maxBytes);
    node.route = { def, index, parser: new QueryParser(def.query), paramNames, cache };
    return node.route;
  }

  /** url: the path without query. A trailing '/' is ignored. Null when nothing matches. */
  match(url: string): RouteMatch | null {
    if (url.length === 0 || url.charCodeAt(0) !== 47) return null;
    const end = url.length > 1 && url.charCodeAt(url.length - 1) === 47 ? url.length - 1 : url.length;
    this.values.length = 0;
    const route = this.walk(this.root, url, 1, end);
    if (route === null) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < route.paramNames.length; i++) params[route.paramNames[i]!] = this.values[i]!;
    return { route, params };
  }

  private walk(node: TrieNode, url: string, start: number, end: number): CompiledRoute | null {
    if (start > end) return node.route;
    let stop = url.indexOf('/', start);
    if (stop === -1 || stop > end) stop = end;
    const segment = url.slice(start, stop);
    const literal = node.literal.get(segment);
    if (literal !== undefined) {
      const found = this.walk(literal, url, stop + 1, end);
      if (found !== null) return found;
    }
    if (node.param === null || segment === '') return null;
    const decoded = decodeSegment(segment);
    if (decoded === null) return null;
    this.values.push(decoded);
    const found = this.walk(node.param, url, stop + 1, end);
    if (found === null) this.values.pop();
    return found;
  }
}

function decodeSegment(segment: string): string | null {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
