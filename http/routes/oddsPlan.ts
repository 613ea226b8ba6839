// What one odds request asks of the engine, worked out once per distinct request:
// the engine filter (league list cut down to in-season leagues), the season note,
// the keyset position decoded from the cursor and the cursor fingerprint. Plans are
// remembered per parsed query object, which the response cache keeps with its entry,
// so a cache hit costs one WeakMap lookup and a seq comparison (validity memo).
import type { OddsFilter } from '../../engine/oddsQuery.ts';
import type { OddsFormat } from '../../engine/rowJson.ts';
import { decodeCursor, encodeCursor, fingerprintOf } from '../cursor.ts';
import { invalidCursor } from '../errors.ts';
import { SeasonCalendar } from './seasonCalendar.ts';

export interface PlanSpec {
  /** Route path template: part of the fingerprint. */
  route: string;
  /** The filter as requested (leagues not yet cut to the in-season ones). */
  filter: OddsFilter;
  format: OddsFormat;
  limit: number;
  cursor: string | undefined;
  /** /odds/updated only. */
  since?: number;
}

export class OddsPlan {
  /** Validity memo: the engine seq the token was computed at, and the token. */
  seenSeq = -1;
  token = 0;
  /** meta.updated of an empty page, kept while the page stays empty (stable ETag). */
  emptyUpdated: number | null = null;

  constructor(
    /** null when a league filter was given and none of its leagues is in season. */
    readonly filter: OddsFilter | null,
    readonly note: string | null,
    /** UTC day of the league split; -1 when the plan does not depend on the day. */
    readonly day: number,
    readonly fingerprint: string,
    readonly afterId: string | null,
    /** On /odds/updated continuation pages: the first page's as-of time (C7). */
    readonly asOf: number | null,
    readonly since: number | null,
    readonly format: OddsFormat,
    readonly limit: number,
  ) {}

  /** The cursor of the page after one ending at lastId. */
  nextCursor(lastId: string, asOf?: number): string {
    return encodeCursor(asOf === undefined ? { key: lastId, fingerprint: this.fingerprint } : { key: lastId, fingerprint: this.fingerprint, asOf });
  }
}

export class OddsPlans {
  private readonly plans = new WeakMap<object, OddsPlan>();
  private readonly calendar = new SeasonCalendar();

  /**
   * The request's plan, built on first sight (and again when the UTC day turns). key is
   * the parsed query where the plan depends on the query alone, and the request itself
   * on path routes: parsed queries are shared between requests with the same query
   * string (QueryParser memo), while path parameters differ.
   */
  of(query: object, now: number, spec: () => PlanSpec): OddsPlan {
    const plan = this.plans.get(query);
    if (plan !== undefined && (plan.day < 0 || plan.day === SeasonCalendar.dayOf(now))) return plan;
    const built = this.build(spec(), now);
    this.plans.set(query, built);
    return built;
  }

  private build(spec: PlanSpec, now: number): OddsPlan {
    const requested = spec.filter.leagues;
    let filter: OddsFilter | null = spec.filter;
    let note: string | null = null;
    let day = -1;
    if (requested !== null && requested.length > 0) {
      const split = this.calendar.split(requested, now);
      day = SeasonCalendar.dayOf(now);
      note = split.note;
      filter = split.inSeason.length === 0 ? null : { ...spec.filter, leagues: split.inSeason };
    }
    const fingerprint = fingerprintOf(spec.route, fingerprintFields(spec));
    let afterId: string | null = null;
    let asOf: number | null = null;
    if (spec.cursor !== undefined) {
      const payload = decodeCursor(spec.cursor, fingerprint);
      if (typeof payload.key !== 'string' || payload.key === '') throw invalidCursor('cursor is not a cursor issued by this service');
      afterId = payload.key;
      if (spec.since !== undefined) {
        if (payload.asOf === undefined) throw invalidCursor('cursor is not a cursor issued by this service');
        asOf = payload.asOf;
      }
    }
    return new OddsPlan(filter, note, day, fingerprint, afterId, asOf, spec.since ?? null, spec.format, spec.limit);
  }
}

/** Every filter of the walk (decisions C7); odds_format, cursor and limit do not change the walk. */
function fingerprintFields(spec: PlanSpec): Record<string, unknown> {
  const f = spec.filter;
  return {
    league: f.leagues,
    sportsbook: f.sportsbooks,
    market: f.markets,
    event_id: f.eventIds,
    player_id: f.playerId,
    team_id: f.teamId,
    scope: f.scope,
    is_main: f.isMain,
    since: spec.since,
  };
}
