// The typed client of the odds service. `api` is openapi-fetch over the types generated
// from the served OpenAPI document (client/schema.ts): every route, its path and query
// parameters and its 200 body are typed. Around it:
//
//   const client = new OddsClient({ baseUrl: 'http://localhost:8080', apiKey });
//   const { data } = await client.api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: 'nba-bos' } } });
//   for await (const row of client.odds({ league: ['nba'] })) ...     // every page, by cursor
//   for await (const team of client.rows('/api/v1/teams', { league: ['nfl'] })) ...
//   const live = await client.streamSync({ onResync: (why) => ... });  live.rows   // a live copy over the push stream (recommended)
//   const board = await client.sync({ onRebootstrap: (note) => ... });  board.follow();  board.rows   // a copy polling the delta feed
//   const signals = await client.signalStream();  (await signals.subscribe({ topic: 'ev', minEv: 0.02 })).records   // a live screen
//
// GETs are revalidated with their ETag (etagCache.ts): an unchanged resource costs the
// service a 304 and the caller still gets its body. Errors throw OddsApiError with the
// service's code, detail and request id.
import createClient, { type Client } from 'openapi-fetch';
import { BoardSync, type DeltaPage, type OddsRow, type Snapshot, type SyncOptions } from './boardSync.ts';
import { EtagCache, type EtagStats } from './etagCache.ts';
import { StreamSync, type StreamSyncOptions } from './streamSync.ts';
import { SignalStream, type SignalStreamOptions } from './signalStream.ts';
import type { components, paths } from './schema.ts';

export type Schemas = components['schemas'];
export type ApiError = Schemas['Error'];

export interface OddsClientOptions {
  /** e.g. http://localhost:8080 */
  baseUrl: string;
  /** Sent as X-Api-Key. */
  apiKey?: string;
  /** Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Keep bodies for ETag revalidation (default true). */
  revalidate?: boolean;
}

export class OddsApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly requestId: string | null,
  ) {
    super(`${status} ${code}: ${detail}${requestId !== null ? ` (request ${requestId})` : ''}`);
    this.name = 'OddsApiError';
  }
}

/** Paths whose 200 body is the list envelope (data, meta, nextCursor). */
export type ListPath = {
  [P in keyof paths]: paths[P]['get'] extends { responses: { 200: { content: { 'application/json': { nextCursor: string | null } } } } } ? P : never;
}[keyof paths];

type GetOf<P extends keyof paths> = paths[P]['get'];
type QueryOf<P extends keyof paths> = GetOf<P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type PathParamsOf<P extends keyof paths> = GetOf<P> extends { parameters: { path?: infer Q } } ? Q : never;
/** One item of a list path's data. */
export type RowOf<P extends ListPath> = NonNullable<DataOf<P>> extends readonly unknown[] ? NonNullable<DataOf<P>>[number] : never;
/** The envelope types data as unknown[] and each route as its rows: indexing the intersection gives the route's row. */
type DataOf<P extends ListPath> = GetOf<P> extends { responses: { 200: { content: { 'application/json': { data?: infer D } } } } } ? D : never;

export class OddsClient {
  readonly api: Client<paths>;
  private readonly etags: EtagCache | null;

  constructor(private readonly options: OddsClientOptions) {
    this.api = createClient<paths>({
      baseUrl: options.baseUrl,
      fetch: options.fetch,
      headers: options.apiKey !== undefined ? { 'X-Api-Key': options.apiKey } : undefined,
      // list parameters as the service reads them: one comma-separated value (a repeated
      // parameter would keep only its last value)
      querySerializer: { array: { style: 'form', explode: false } },
    });
    this.etags = options.revalidate === false ? null : new EtagCache();
    if (this.etags !== null) this.api.use(this.etags.middleware);
  }

  /** Revalidation counts (zeros when revalidation is off). */
  get etagStats(): EtagStats {
    return this.etags?.stats ?? { notModified: 0, fetched: 0 };
  }

  /** Every row of a list route, page after page by its cursor. */
  async *rows<P extends ListPath>(path: P, query?: Omit<QueryOf<P>, 'cursor'>, pathParams?: PathParamsOf<P>): AsyncGenerator<RowOf<P>> {
    let cursor: string | null = null;
    do {
      const params = { query: { ...(query ?? {}), ...(cursor !== null && { cursor }) }, ...(pathParams !== undefined && { path: pathParams }) };
      // the path is generic here; each caller's query is checked against it by the signature above
      const { data, error, response } = await (this.api.GET as (path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(path, { params });
      if (error !== undefined || data === undefined) throw apiError(response, error);
      const page = data as { data: RowOf<P>[]; nextCursor: string | null };
      yield* page.data;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  /** Every odds row matching the query (/api/v1/odds), across pages. */
  odds(query?: Omit<QueryOf<'/api/v1/odds'>, 'cursor'>): AsyncGenerator<OddsRow> {
    return this.rows('/api/v1/odds', query);
  }

  /** The whole board (/api/v1/snapshot), decoded. */
  async snapshot(): Promise<Snapshot> {
    const { data, error, response } = await this.api.GET('/api/v1/snapshot', {});
    if (error !== undefined || data === undefined) throw apiError(response, error);
    return data;
  }

  /** One page of the delta feed (/api/v1/odds/updated). */
  async deltaPage(since: string, cursor: string | null, limit: number): Promise<DeltaPage> {
    const { data, error, response } = await this.api.GET('/api/v1/odds/updated', { params: { query: { since, limit, ...(cursor !== null && { cursor }) } } });
    if (error !== undefined || data === undefined) throw apiError(response, error);
    return data as DeltaPage;
  }

  /**
   * A copy of the board (or of the rows of `options.filter`) kept by the push stream:
   * an image, then deltas; it reconnects and resumes by itself (onResync says when it
   * had to take a fresh image instead). Resolves once the first image is held. The
   * recommended way to keep a copy.
   */
  streamSync(options: StreamSyncOptions = {}): Promise<StreamSync> {
    return StreamSync.open(this.options.baseUrl, { apiKey: this.options.apiKey, ...options });
  }

  /**
   * The signal stream over a WebSocket (/api/v1/stream/signals/ws): steam moves as they
   * happen, and the screens (fair lines, best prices, +EV, middles) kept current, many
   * subscriptions on one connection. Resolves once connected.
   */
  signalStream(options: SignalStreamOptions = {}): Promise<SignalStream> {
    return SignalStream.open(this.options.baseUrl, { apiKey: this.options.apiKey, ...options });
  }

  /**
   * A copy of the board loaded from the snapshot; walk() or follow() keep it current by
   * polling the delta feed, loading the snapshot again by themselves when the feed asks
   * for it (onRebootstrap says so).
   */
  async sync(options?: SyncOptions): Promise<BoardSync> {
    const board = new BoardSync(this, options);
    await board.bootstrap();
    return board;
  }
}

function apiError(response: Response, body: unknown): OddsApiError {
  const error = (typeof body === 'object' && body !== null ? body : {}) as Partial<ApiError>;
  return new OddsApiError(response.status, error.code ?? 'http_error', error.detail ?? String(body ?? response.statusText), response.headers.get('X-Request-Id'));
}
