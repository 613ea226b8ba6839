import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeLeagues, seasonSettlementMs } from '../engine/calendar.ts';
import type { Board, EventRecord } from '../engine/model.ts';
import { STATS_BY_SPORT } from '../fixtures/stats.ts';
import { NOW, board } from './fixtures-helpers.ts';

const JULY = Date.parse('2027-07-15T18:00:00Z');
const URL_SAFE = /^[A-Za-z0-9._~-]+$/;

function rowsOf(b: Board): { markets: Set<string>; subtypes: Set<string>; periods: Set<string>; scopes: Set<string>; dfs: number; suspendedLive: number; altMarkets: number; eventsWithOdds: Set<string>; divisionTeams: Map<string, Set<string>> } {
  const markets = new Set<string>();
  const subtypes = new Set<string>();
  const periods = new Set<string>();
  const scopes = new Set<string>();
  const eventsWithOdds = new Set<string>();
  const lines = new Map<string, Set<number>>();
  const divisionTeams = new Map<string, Set<string>>();
  const status = new Map(b.events.map((e) => [e.id, e.status]));
  let dfs = 0;
  let suspendedLive = 0;
  b.forEachOdds((row) => {
    markets.add(row.market);
    subtypes.add(row.marketSubtype);
    periods.add(row.period);
    if (row.marketScope) scopes.add(row.marketScope);
    eventsWithOdds.add(row.eventId);
    if (row.dfsMultiplier !== null) dfs++;
    if (row.suspended && status.get(row.eventId) === 'in_progress' && !row.marketScope) suspendedLive++;
    if (row.line !== null && row.dfsMultiplier === null) {
      const k = `${row.eventId}|${row.sportsbook}|${row.marketSubtype}|${row.period}|${row.playerId ?? row.teamId ?? ''}|${row.side}`;
      const s = lines.get(k) ?? new Set<number>();
      s.add(row.line);
      lines.set(k, s);
    }
    if (row.league === 'nfl' && row.marketSubtype === 'DIVISION_WINNER' && row.sportsbook === 'pinnacle') {
      const s = divisionTeams.get(row.segment!) ?? new Set<string>();
      s.add(row.teamId!);
      divisionTeams.set(row.segment!, s);
    }
  });
  let altMarkets = 0;
  for (const s of lines.values()) if (s.size > 1) altMarkets++;
  return { markets, subtypes, periods, scopes, dfs, suspendedLive, altMarkets, eventsWithOdds, divisionTeams };
}

function statusesByLeague(events: EventRecord[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const e of events) {
    if (e.isFutures) continue;
    const s = out.get(e.league) ?? new Set<string>();
    s.add(e.status);
    out.set(e.league, s);
  }
  return out;
}

describe('fixture boards: sizes, coverage and cold data', () => {
  it('row counts are within 30% of the size targets', () => {
    const small = board('small').oddsCount;
    const medium = board('medium').oddsCount;
    assert.ok(small >= 3500 && small <= 6500, `small ${small}`);
    assert.ok(medium >= 70_000 && medium <= 130_000, `medium ${medium}`);
  });

  it('the small board covers every market kind, period, alternates, DFS, futures and golf', () => {
    const b = board('small');
    const r = rowsOf(b);
    for (const m of ['MONEYLINE', 'SPREAD', 'TOTAL', 'TEAM_TOTAL', 'PLAYER_TOTAL', 'PLAYER_MILESTONE', 'MONEYLINE_3_WAY', 'CATEGORICAL']) {
      assert.ok(r.markets.has(m), `market ${m}`);
    }
    for (const p of ['FULL', '1H', '1Q', 'REG_SEASON']) assert.ok(r.periods.has(p), `period ${p}`);
    for (const s of ['CHAMPIONSHIP_WINNER', 'CONFERENCE_WINNER', 'DIVISION_WINNER', 'MVP', 'TOURNAMENT_WINNER', 'TOP_10_FINISH', 'PLAYER_TOTAL_PASSING_YARDS']) {
      assert.ok(r.subtypes.has(s), `subtype ${s}`);
    }
    assert.deepEqual([...r.scopes].sort(), ['SEASON', 'TOURNAMENT']);
    assert.ok(r.dfs > 100, `DFS rows ${r.dfs}`);
    assert.ok(r.altMarkets > 50, `markets with alternate lines ${r.altMarkets}`);
    assert.ok(r.suspendedLive > 0, 'some live prices are suspended');
    const full = [...statusesByLeague(b.events)].filter(([, s]) => s.has('final') && s.has('in_progress') && s.has('scheduled'));
    assert.ok(full.length >= 2, `leagues with events in every status: ${full.map(([l]) => l)}`);
    assert.ok(b.events.some((e) => e.league === 'pga' && e.isFutures && r.eventsWithOdds.has(e.id)), 'a golf tournament with odds');
  });

  it('the medium board has every in-season league, futures anchors, postponed games and no odds on final games', () => {
    const b = board('medium');
    const r = rowsOf(b);
    const leagues = new Set(b.events.map((e) => e.league));
    for (const l of ['nfl', 'ncaaf', 'nba', 'ncaab', 'nhl', 'epl', 'ucl']) assert.ok(leagues.has(l), l);
    assert.ok(!leagues.has('mlb') && !leagues.has('wnba'));
    for (const l of activeLeagues(NOW).filter((x) => x !== 'pga')) {
      const anchor = b.events.find((e) => e.id === `${l}-2026-futures`);
      assert.ok(anchor, `${l} anchor`);
      assert.equal(anchor.isFutures, true);
      assert.equal(anchor.homeTeamId, null);
      assert.equal(anchor.status, 'in_progress');
      const season = b.seasons.find((s) => s.futuresEventId === anchor.id)!;
      assert.equal(anchor.startTime, seasonSettlementMs(season));
      assert.ok(r.eventsWithOdds.has(anchor.id));
    }
    const postponed = b.events.filter((e) => e.status === 'postponed');
    assert.ok(postponed.length >= 2 && postponed.length <= 12, `postponed ${postponed.length}`);
    for (const e of b.events) {
      if (e.status === 'final' || e.status === 'postponed') assert.ok(!r.eventsWithOdds.has(e.id), `odds on ${e.status} ${e.id}`);
    }
    assert.ok(b.events.filter((e) => e.status === 'final').length > 100);
    // NFL divisions: eight four-team races, each its own segment.
    assert.equal(r.divisionTeams.size, 8);
    for (const [segment, teams] of r.divisionTeams) assert.equal(teams.size, 4, segment);
  });

  it('teams, players and venues are consistent and realistic', () => {
    const b = board('small');
    const byLeague = new Map<string, number>();
    for (const t of b.teams) byLeague.set(t.league, (byLeague.get(t.league) ?? 0) + 1);
    for (const l of ['nfl', 'nba', 'nhl', 'mlb', 'mls']) assert.ok(byLeague.get(l)! >= 28 && byLeague.get(l)! <= 32, `${l} ${byLeague.get(l)}`);
    const nfl = b.teams.filter((t) => t.league === 'nfl');
    assert.deepEqual([...new Set(nfl.map((t) => t.conference))].sort(), ['AFC', 'NFC']);
    const divisions = new Map<string, number>();
    for (const t of nfl) divisions.set(t.division!, (divisions.get(t.division!) ?? 0) + 1);
    assert.equal(divisions.size, 8);
    for (const n of divisions.values()) assert.equal(n, 4);
    for (const l of ['nba', 'nhl']) assert.ok(b.teams.filter((t) => t.league === l).every((t) => t.conference && t.division), l);

    const teamIds = new Set(b.teams.map((t) => t.id));
    const venueIds = new Set(b.venues.map((v) => v.id));
    const playerIds = new Set<string>();
    for (const t of b.teams) {
      assert.ok(URL_SAFE.test(t.id) && t.id.startsWith(`${t.league}-`), t.id);
      if (t.venueId) assert.ok(venueIds.has(t.venueId), t.venueId);
    }
    for (const p of b.players) {
      assert.ok(URL_SAFE.test(p.id) && p.id.startsWith(`${p.teamId}-`), p.id);
      assert.ok(teamIds.has(p.teamId), p.teamId);
      assert.ok(!playerIds.has(p.id), `duplicate ${p.id}`);
      playerIds.add(p.id);
    }
    const positions = (team: string): string[] => b.players.filter((p) => p.teamId === team).map((p) => p.position);
    assert.ok(['QB', 'RB', 'WR', 'TE', 'K'].every((x) => positions('nfl-kc').includes(x)));
    assert.ok(['PG', 'SG', 'SF', 'PF', 'C'].every((x) => positions('nba-bos').includes(x)));
    assert.ok(['C', 'LW', 'RW', 'D', 'G'].every((x) => positions('nhl-edm').includes(x)));
    assert.ok(['SP', 'RP', 'C', 'SS', 'CF'].every((x) => positions('mlb-nyy').includes(x)));
    assert.ok(['GK', 'DF', 'MF', 'FW'].every((x) => positions('epl-ars').includes(x)));
    for (const e of b.events) {
      assert.ok(URL_SAFE.test(e.id), e.id);
      assert.equal(e.startTime % 60_000, 0);
      if (e.venueId) assert.ok(venueIds.has(e.venueId), e.venueId);
      if (!e.isFutures) {
        assert.ok(teamIds.has(e.homeTeamId!) && teamIds.has(e.awayTeamId!));
        assert.notEqual(e.homeTeamId, e.awayTeamId);
      }
    }
  });

  it('final games have team and player box scores that agree and use the prop stat keys', () => {
    const b = board('medium');
    const finals = b.events.filter((e) => e.status === 'final' && !e.isFutures);
    const teamRows = new Map<string, typeof b.teamBox>();
    for (const row of b.teamBox) teamRows.set(row.eventId, [...(teamRows.get(row.eventId) ?? []), row]);
    const playerRows = new Map<string, typeof b.playerBox>();
    for (const row of b.playerBox) playerRows.set(row.eventId, [...(playerRows.get(row.eventId) ?? []), row]);
    const sportOf: Record<string, keyof typeof STATS_BY_SPORT> = { nba: 'basketball', ncaab: 'basketball', nhl: 'hockey', epl: 'soccer', ucl: 'soccer', mls: 'soccer', nfl: 'football', ncaaf: 'football' };
    for (const e of finals) {
      const rows = teamRows.get(e.id) ?? [];
      assert.equal(rows.length, 2, e.id);
      const [a, c] = rows;
      assert.deepEqual([a.homeScore, a.awayScore], [c.homeScore, c.awayScore]);
      assert.equal(a.result + c.result, 0);
      assert.deepEqual(new Set(rows.map((r) => r.teamId)), new Set([e.homeTeamId, e.awayTeamId]));
      const players = playerRows.get(e.id) ?? [];
      assert.ok(players.length >= 10, `${e.id}: ${players.length} players`);
      const date = new Date(e.startTime).toISOString().slice(0, 10);
      for (const p of players) {
        assert.ok(p.teamId === e.homeTeamId || p.teamId === e.awayTeamId);
        assert.equal(p.date, date);
      }
      const sport = sportOf[e.league];
      const scoreKey = sport === 'basketball' ? 'points' : sport === 'hockey' || sport === 'soccer' ? 'goals' : null;
      if (scoreKey) {
        const home = players.filter((p) => p.teamId === e.homeTeamId).reduce((s, p) => s + ((p.data[scoreKey] as number) ?? 0), 0);
        assert.equal(home, a.homeScore, `${e.id} home ${scoreKey}`);
      }
      if (sport === 'basketball' || sport === 'football' || sport === 'hockey') {
        const keys = new Set(players.flatMap((p) => Object.keys(p.data)));
        for (const spec of STATS_BY_SPORT[sport].filter((s) => s.gameProp)) assert.ok(keys.has(spec.key), `${e.id} lacks ${spec.key}`);
      }
    }
  });

  it('contexts carry league-specific fields: probable pitchers in July, weather outdoors, officials', () => {
    const july = board('small', 42, JULY);
    const leagues = new Set(july.events.map((e) => e.league));
    assert.ok(leagues.has('mlb') && !leagues.has('nfl'));
    const players = new Map(july.players.map((p) => [p.id, p]));
    const mlbGames = july.events.filter((e) => e.league === 'mlb' && !e.isFutures);
    assert.ok(mlbGames.length > 0);
    for (const e of mlbGames) {
      const pp = e.context.probable_pitchers as { home_id: string; away_id: string };
      assert.equal(players.get(pp.home_id)?.teamId, e.homeTeamId);
      assert.equal(players.get(pp.away_id)?.teamId, e.awayTeamId);
      assert.equal(players.get(pp.home_id)?.position, 'SP');
    }
    const nov = board('small');
    const nfl = nov.events.filter((e) => e.league === 'nfl' && !e.isFutures);
    for (const e of nfl) {
      const ctx = e.context as { weather: { indoor: boolean; temperatureF?: number }; officials: unknown[] };
      assert.ok(ctx.weather);
      assert.equal(ctx.officials.length, 7);
      const venue = nov.venues.find((v) => v.id === e.venueId)!;
      assert.equal(ctx.weather.indoor, venue.indoor);
      if (!venue.indoor) assert.equal(typeof ctx.weather.temperatureF, 'number');
    }
  });
});
