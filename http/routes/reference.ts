// The reference routes: /leagues
// and /seasons from the league calendar at the clock's now (they rotate), and
// /sportsbooks, /markets, /markets/active counted from the engine's live rows, so
// their totals agree with /status.
import { activeLeagues, seasonEndMs, seasonStartMs, seasonsForYear } from '../../engine/calendar.ts';
import type { SeasonRecord } from '../../engine/model.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import { SEASONS_QUERY } from './catalogParams.ts';
import type { Services } from './services.ts';
import { SeasonCalendar } from './seasonCalendar.ts';
import { TokenMemo } from './tokenMemo.ts';
import { BASE_URL, curlExample, ETAG_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

/** The latest season start or end at or before now: when a status or the active set last turned. */
function lastTurn(seasons: readonly SeasonRecord[], now: number): number {
  let last = 0;
  for (const s of seasons) {
    const start = seasonStartMs(s);
    const end = seasonEndMs(s);
    if (start <= now && start > last) last = start;
    if (end <= now && end > last) last = end;
  }
  return last;
}

function yearOf(now: number): number {
  return new Date(now).getUTCFullYear();
}

export function referenceRoutes(services: Services): AnyRoute[] {
  const { engine, persistence, membership } = services;
  const seasonsMemo = new TokenMemo();

  const leagues = defineRoute({
    path: '/api/v1/leagues',
    auth: 'none',
    response: 'League',
    query: [],
    summary: 'League codes with a season in progress today; the list rotates with the calendar.',
    description:
      `Sorted codes. A season is in progress from its startDate through its endDate (UTC days). meta.updated is when the list last turned (the latest season start or end so far). No key needed. ${ETAG_RULES}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/leagues'`),
    cache: { validity: (_req, now) => SeasonCalendar.dayOf(now), capacity: 8 },
    handle: (req) => {
      const year = yearOf(req.now);
      const seasons = [...seasonsForYear(year - 1, req.now), ...seasonsForYear(year, req.now)];
      return { kind: 'data', data: activeLeagues(req.now), updated: lastTurn(seasons, req.now) };
    },
  });

  const seasons = defineRoute({
    path: '/api/v1/seasons',
    auth: 'none',
    response: 'Season',
    query: SEASONS_QUERY,
    summary: 'Every league season overlapping a calendar year, with its status today.',
    description:
      `Sorted by league, then year. Without year: 400 missing_parameter. futuresEventId names the synthetic event anchoring the season's futures where that event exists, else null. meta.updated is the later of when the events data last changed and the latest start or end of these seasons so far. No key needed. ${ETAG_RULES} ${PARAMETER_ERRORS}` +
      curlExample(`curl -s "${BASE_URL}/api/v1/seasons?year=$(date -u +%Y)"`),
    cache: { validity: (_req, now) => seasonsMemo.of(SeasonCalendar.dayOf(now), persistence.version('events')) },
    handle: (req) => {
      const rows = persistence.seasons.forYear(req.query.year, req.now);
      return { kind: 'data', data: rows, updated: Math.max(persistence.changedAt('events'), lastTurn(rows, req.now)) };
    },
  });

  const sportsbooks = defineRoute({
    path: '/api/v1/sportsbooks',
    auth: 'none',
    response: 'Sportsbook',
    query: [],
    summary: 'Every source (sportsbooks and DFS platforms) currently ingesting, with its live row count.',
    description:
      `Sources with at least one live odds row, by id. marketCount counts live rows, suspended included, tombstones excluded: the counts add up to /status totalMarkets. meta.updated is when a row last joined or left the board. No key needed. ${ETAG_RULES}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/sportsbooks'`),
    cache: { validity: () => membership.version, capacity: 8 },
    handle: () => ({ kind: 'data', data: engine.bookCounts(), updated: membership.changedAt }),
  });

  const markets = defineRoute({
    path: '/api/v1/markets',
    auth: 'none',
    response: 'MarketType',
    query: [],
    summary: 'Distinct market types, aggregated across subtypes, with live row counts.',
    description:
      `One item per market type with live rows, by marketType; marketSubtype is omitted. liveCount counts live rows (suspended included, tombstones excluded) and the counts add up to /status totalMarkets. No key needed. ${ETAG_RULES}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/markets'`),
    cache: { validity: () => membership.version, capacity: 8 },
    handle: () => ({ kind: 'data', data: marketTypes(engine.marketCounts()), updated: membership.changedAt }),
  });

  const activeMarkets = defineRoute({
    path: '/api/v1/markets/active',
    auth: 'none',
    response: 'MarketType',
    query: [],
    summary: 'Distinct (marketType, marketSubtype) pairs currently live, with counts.',
    description:
      `Sorted by marketType, then marketSubtype. liveCount counts live rows (suspended included, tombstones excluded); the counts add up to /status totalMarkets. No key needed. ${ETAG_RULES}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/markets/active'`),
    cache: { validity: () => membership.version, capacity: 8 },
    handle: () => ({ kind: 'data', data: engine.marketCounts(), updated: membership.changedAt }),
  });

  return [leagues, seasons, sportsbooks, markets, activeMarkets];
}

/** Pairs (sorted by type) summed per type. */
function marketTypes(pairs: readonly { marketType: string; liveCount: number }[]): { marketType: string; liveCount: number }[] {
  const out: { marketType: string; liveCount: number }[] = [];
  for (const pair of pairs) {
    const last = out[out.length - 1];
    if (last !== undefined && last.marketType === pair.marketType) last.liveCount += pair.liveCount;
    else out.push({ marketType: pair.marketType, liveCount: pair.liveCount });
  }
  return out;
}
