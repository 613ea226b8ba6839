// What one request of a list route (/odds and its siblings, /events, /events/active,
// /edges, /arbitrage) asks, worked out once per distinct request: the requested leagues
// cut to those in season today (the others named in the note), the UTC day that cut was
// made on, the keyset position decoded from the cursor and checked against the walk's
// fingerprint, and the route's engine query. A route supplies only what differs: its
// filters (the fingerprint), its league filter, its engine query and the shape of its
// cursor key (ListPlanSpec).
//
// Plans are remembered per parsed query object, which QueryParser shares between
// requests with the same query string and the response cache keeps with its entry (or,
// on routes with path parameters, per request). The plan also holds the route's
// response-cache validity token, so a cached request, or its 304, costs one WeakMap
// lookup and a few number comparisons, and allocates nothing.
import type { CursorCodec } from '../cursor.ts';
import { keysetWalk, nextCursor } from './catalogCursor.ts';
import { SeasonCalendar } from './seasonCalendar.ts';
import { TokenMemo } from './tokenMemo.ts';

/** What a route says about one request; read once per plan built. */
export interface ListPlanSpec<K, Q> {
  /** Route path template: part of the cursor fingerprint. */
  route: string;
  /** Every filter of the walk, by parameter name, as requested: the cursor fingerprint (cursor and limit are left out). */
  filters: Record<string, unknown>;
  /** The requested league filter; null or undefined when none was given. */
  leagues: readonly string[] | null | undefined;
  cursor: string | undefined;
  /** Whether a decoded cursor position has the shape of this list's key. */
  isKey(key: unknown): key is K;
  /** Refuse a cursor without the as-of instant the walk's first page fixed. */
  needsAsOf?: boolean;
  /** The route's engine query, given the in-season leagues (null: no league filter). */
  query(leagues: string[] | null): Q;
}

export class ListPlan<K, Q> {
  /** meta.updated of an empty page, for routes that keep it while the page stays empty (a stable body and ETag). */
  emptyUpdated: number | null = null;
  private readonly tokens = new TokenMemo();
  private token = 0;
  private basis = Number.NaN;

  constructor(
    private readonly cursors: CursorCodec,
    /** The route's engine query, its league filter cut to the in-season leagues. */
    readonly query: Q,
    /** A league filter was given and none of its leagues is in season: the page is empty without asking the engine. */
    readonly none: boolean,
    /** meta.note naming the requested leagues without an active season; null when there are none. */
    readonly note: string | null,
    /** UTC day of the league cut; -1 when the plan does not depend on the day. */
    readonly day: number,
    readonly fingerprint: string,
    /** The keyset position after which the page starts (the cursor's key). */
    readonly after: K | undefined,
    /** The as-of instant the cursor carries (the walk's first page's), if any. */
    readonly asOf: number | undefined,
  ) {}

  /**
   * The response-cache validity token: it moves exactly when an input differs from
   * this plan's previous call. The UTC day needs no input: a plan that depends on it
   * is replaced when the day turns, and a new plan's tokens are new.
   */
  tokenOf(a: number, b = 0): number {
    this.token = this.tokens.of(a, b);
    return this.token;
  }

  /**
   * Whether basis, a cheap number that moves whenever any input of the token may have
   * (the engine seq), is unchanged since the previous call: while it is, the last
   * token stands and its inputs need not be read.
   */
  holds(basis: number): boolean {
    if (basis === this.basis) return true;
    this.basis = basis;
    return false;
  }

  /** The token of the last tokenOf call. */
  get lastToken(): number {
    return this.token;
  }

  /** The cursor of the page after one ending at key (asOf: the walk's as-of instant, where the list has one). */
  nextCursor(key: K, asOf?: number): string {
    return nextCursor(this.cursors, this.fingerprint, key, asOf);
  }
}

/**
 * The plans of one list route. describe turns a request (the parsed query, or the
 * request on routes with path parameters) into what the route asks; it may throw (an
 * unknown path id), and nothing is remembered then.
 */
export class ListPlans<S, K, Q> {
  private readonly plans = new WeakMap<object, ListPlan<K, Q>>();
  private readonly calendar = new SeasonCalendar();

  constructor(
    private readonly cursors: CursorCodec,
    private readonly describe: (source: S) => ListPlanSpec<K, Q>,
  ) {}

  /**
   * The plan of a request, built on first sight and again when the UTC day turns (for
   * plans with a league filter). key is the parsed query where the plan depends on the
   * query alone, and the request itself on routes with path parameters: parsed
   * queries are shared between requests with the same query string, path parameters
   * are not part of them.
   */
  of(key: object, source: S, now: number): ListPlan<K, Q> {
    const known = this.plans.get(key);
    if (known !== undefined && (known.day < 0 || known.day === SeasonCalendar.dayOf(now))) return known;
    const plan = this.build(this.describe(source), now);
    this.plans.set(key, plan);
    return plan;
  }

  private build(spec: ListPlanSpec<K, Q>, now: number): ListPlan<K, Q> {
    const walk = keysetWalk(this.cursors, spec.route, spec.filters, spec.cursor, spec.isKey, spec.needsAsOf);
    const requested = spec.leagues;
    if (requested === null || requested === undefined || requested.length === 0) {
      return new ListPlan(this.cursors, spec.query(null), false, null, -1, walk.fingerprint, walk.after, walk.asOf);
    }
    const split = this.calendar.split(requested, now);
    const none = split.inSeason.length === 0;
    return new ListPlan(this.cursors, spec.query(split.inSeason), none, split.note, SeasonCalendar.dayOf(now), walk.fingerprint, walk.after, walk.asOf);
  }
}
