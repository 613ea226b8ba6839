// /teams, /teams/{id}, /teams/{id}/stats, /players, /players/{id}, /players/{id}/stats
// and /stats/players over the real app and its
// SQLite file, against the generated board; every reply validated against the
// served OpenAPI document.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PlayerBoxRow, TeamBoxRow } from '../../engine/model.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { byId, expectError, walk, type Json } from '../helpers/catalog-helpers.ts';

const TEAMS = '/api/v1/teams';
const TEAM = '/api/v1/teams/:teamId';
const TEAM_STATS = '/api/v1/teams/:teamId/stats';
const PLAYERS = '/api/v1/players';
const PLAYER = '/api/v1/players/:playerId';
const PLAYER_STATS = '/api/v1/players/:playerId/stats';
const STATS_PLAYERS = '/api/v1/stats/players';

let t: TestApp;

function teamRows(filter: (team: Json) => boolean = () => true): Json[] {
  return t.app.board.teams
    .map((team) => ({ id: team.id, name: team.name, abbreviation: team.abbreviation, league: team.league }))
    .filter(filter)
    .sort(byId);
}

function playerRows(filter: (player: Json) => boolean = () => true): Json[] {
  return t.app.board.players
    .map((p) => ({ id: p.id, name: p.name, league: p.league, teamId: p.teamId, position: p.position }))
    .filter(filter)
    .sort(byId);
}

function eventStart(id: string): number {
  return t.app.board.events.find((e) => e.id === id)!.startTime;
}

function seasonOf(id: string): number {
  return t.app.board.events.find((e) => e.id === id)!.seasonYear;
}

/** Box rows in event order (start, then id), as the routes render them. */
function byEvent<R extends { eventId: string }>(rows: R[]): R[] {
  return [...rows].sort((a, b) => eventStart(a.eventId) - eventStart(b.eventId) || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
}

const teamBoxJson = (b: TeamBoxRow): Json => ({ eventId: b.eventId, teamId: b.teamId, homeId: b.homeId, awayId: b.awayId, league: b.league, homeScore: b.homeScore, awayScore: b.awayScore, result: b.result, stats: b.stats });
const playerBoxJson = (b: PlayerBoxRow): Json => ({ eventId: b.eventId, playerId: b.playerId, teamId: b.teamId, date: b.date, data: b.data });

function compareBox(a: Json, b: Json): number {
  if (a.eventId !== b.eventId) return a.eventId < b.eventId ? -1 : 1;
  return a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;
}

describe('teams and players', () => {
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('/teams: every team once, keyset over id, 100 per page by default, league filter any-of and case-insensitive', async () => {
    const all = teamRows();
    assert.ok(all.length > 100);
    const { rows, pages } = await walk(t, TEAMS, TEAMS);
    assert.deepEqual(rows, all);
    assert.equal(pages[0]!.data.length, 100);
    assert.equal(pages.length, Math.ceil(all.length / 100));
    const small = await walk(t, TEAMS, `${TEAMS}?limit=7`);
    assert.deepEqual(small.rows, all);
    const nba = await walk(t, TEAMS, `${TEAMS}?league=NBA&limit=9`);
    assert.deepEqual(nba.rows, teamRows((team) => team.league === 'nba'));
    const two = await walk(t, TEAMS, `${TEAMS}?league=nba,mlb`);
    assert.deepEqual(two.rows, teamRows((team) => team.league === 'nba' || team.league === 'mlb'));
    assert.ok(two.rows.some((team) => team.league === 'mlb'), 'teams of an out-of-season league are still listed');
    const none = await t.call(TEAMS, `${TEAMS}?league=xfl`);
    assert.deepEqual(none.body.data, []);
    await expectError(t, TEAMS, `${TEAMS}?league=${Array.from({ length: 21 }, (_, i) => `l${i}`).join(',')}`, 400, 'invalid_parameter', 'league');
  });

  it('/teams cursor and limit errors', async () => {
    const first = await t.call(TEAMS, `${TEAMS}?league=nba&limit=3`);
    const cursor = first.body.nextCursor as string;
    await expectError(t, TEAMS, `${TEAMS}?league=nfl&cursor=${cursor}`, 400, 'invalid_cursor', 'cursor');
    await expectError(t, TEAMS, `${TEAMS}?cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(t, TEAMS, `${TEAMS}?cursor=%%%`, 400, 'invalid_parameter', 'cursor');
    await expectError(t, TEAMS, `${TEAMS}?cursor=abc`, 400, 'invalid_cursor');
    await expectError(t, PLAYERS, `${PLAYERS}?league=nba&cursor=${cursor}`, 400, 'invalid_cursor');
    for (const limit of ['0', '1001']) await expectError(t, TEAMS, `${TEAMS}?limit=${limit}`, 400, 'invalid_parameter', 'limit');
  });

  it('/teams/{id}: one team; 404 for an unknown id', async () => {
    for (const team of teamRows().slice(0, 20)) {
      const { body } = await t.call(TEAM, `${TEAMS}/${team.id}`);
      assert.deepEqual(body.data, [team]);
    }
    await expectError(t, TEAM, `${TEAMS}/nba-nope`, 404, 'not_found', 'teamId');
  });

  it('/teams/{id}/stats: the team\'s box rows in event order, season filter; 404 for an unknown team', async () => {
    const withBox = [...new Set(t.app.board.teamBox.map((b) => b.teamId))];
    assert.ok(withBox.length > 2);
    let several = false;
    for (const teamId of withBox) {
      const expected = byEvent(t.app.board.teamBox.filter((b) => b.teamId === teamId)).map(teamBoxJson);
      several ||= expected.length > 1;
      const { body } = await t.call(TEAM_STATS, `${TEAMS}/${teamId}/stats`);
      assert.deepEqual(body.data, expected);
      const season = seasonOf(expected[0]!.eventId);
      const inSeason = await t.call(TEAM_STATS, `${TEAMS}/${teamId}/stats?season=${season}`);
      assert.deepEqual(inSeason.body.data, expected.filter((r) => seasonOf(r.eventId) === season));
      const other = await t.call(TEAM_STATS, `${TEAMS}/${teamId}/stats?season=${season - 3}`);
      assert.deepEqual(other.body.data, []);
    }
    assert.ok(several, 'some team has several box rows, so order is tested');
    const noGames = teamRows().find((team) => !withBox.includes(team.id))!;
    const empty = await t.call(TEAM_STATS, `${TEAMS}/${noGames.id}/stats`);
    assert.deepEqual(empty.body.data, []);
    await expectError(t, TEAM_STATS, `${TEAMS}/nba-nope/stats`, 404, 'not_found', 'teamId');
    await expectError(t, TEAM_STATS, `${TEAMS}/${withBox[0]}/stats?season=twenty`, 400, 'invalid_parameter', 'season');
    await expectError(t, TEAM_STATS, `${TEAMS}/${withBox[0]}/stats?season=99999`, 400, 'invalid_parameter', 'season');
  });

  it('/players: keyset over id; league; team and team_id are aliases and team_id wins', async () => {
    const { rows } = await walk(t, PLAYERS, `${PLAYERS}?limit=1000`);
    assert.deepEqual(rows, playerRows());
    const nba = await walk(t, PLAYERS, `${PLAYERS}?league=nba&limit=250`);
    assert.deepEqual(nba.rows, playerRows((p) => p.league === 'nba'));
    const [a, b] = ['nba-bos', 'nfl-sf'];
    const viaTeamId = await walk(t, PLAYERS, `${PLAYERS}?team_id=${a}&limit=4`);
    assert.deepEqual(viaTeamId.rows, playerRows((p) => p.teamId === a));
    assert.ok(viaTeamId.rows.length > 4);
    const viaTeam = await walk(t, PLAYERS, `${PLAYERS}?team=${a}&limit=4`);
    assert.deepEqual(viaTeam.rows, viaTeamId.rows);
    const both = await walk(t, PLAYERS, `${PLAYERS}?team=${b}&team_id=${a}&limit=4`);
    assert.deepEqual(both.rows, viaTeamId.rows, 'team_id wins over team');
    const reversed = await walk(t, PLAYERS, `${PLAYERS}?team_id=${b}&team=${a}`);
    assert.deepEqual(reversed.rows, playerRows((p) => p.teamId === b));
    const mismatch = await t.call(PLAYERS, `${PLAYERS}?league=nfl&team_id=${a}`);
    assert.deepEqual(mismatch.body.data, [], 'filters combine with AND');
    const leagueAndTeam = await walk(t, PLAYERS, `${PLAYERS}?league=nba,nfl&team=${b}`);
    assert.deepEqual(leagueAndTeam.rows, playerRows((p) => p.teamId === b));
  });

  it('/players cursors are bound to the resolved team, so a walk may switch alias spelling but not team', async () => {
    const first = await t.call(PLAYERS, `${PLAYERS}?team=nba-bos&limit=3`);
    const cursor = first.body.nextCursor as string;
    const viaTeamId = await t.call(PLAYERS, `${PLAYERS}?team_id=nba-bos&limit=3&cursor=${cursor}`);
    assert.equal(viaTeamId.reply.status, 200);
    const expected = playerRows((p) => p.teamId === 'nba-bos');
    assert.deepEqual(viaTeamId.body.data, expected.slice(3, 6));
    await expectError(t, PLAYERS, `${PLAYERS}?team=nba-cle&limit=3&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(t, PLAYERS, `${PLAYERS}?team=nba-cle&team_id=nba-cle&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(t, PLAYERS, `${PLAYERS}?limit=1001`, 400, 'invalid_parameter', 'limit');
  });

  it('/players/{id} and /players/{id}/stats; 404 for unknown players', async () => {
    for (const player of playerRows().slice(0, 10)) {
      const { body } = await t.call(PLAYER, `${PLAYERS}/${player.id}`);
      assert.deepEqual(body.data, [player]);
    }
    const withBox = [...new Set(t.app.board.playerBox.map((b) => b.playerId))];
    let several = false;
    for (const playerId of withBox.slice(0, 40)) {
      const expected = byEvent(t.app.board.playerBox.filter((b) => b.playerId === playerId)).map(playerBoxJson);
      several ||= expected.length > 1;
      const { body } = await t.call(PLAYER_STATS, `${PLAYERS}/${playerId}/stats`);
      assert.deepEqual(body.data, expected);
      const season = seasonOf(expected[0]!.eventId);
      const other = await t.call(PLAYER_STATS, `${PLAYERS}/${playerId}/stats?season=${season + 1}`);
      assert.deepEqual(other.body.data, []);
      const same = await t.call(PLAYER_STATS, `${PLAYERS}/${playerId}/stats?season=${season}`);
      assert.deepEqual(same.body.data, expected.filter((r) => seasonOf(r.eventId) === season));
    }
    assert.ok(several, 'some player has several box rows, so order is tested');
    await expectError(t, PLAYER, `${PLAYERS}/nobody`, 404, 'not_found', 'playerId');
    await expectError(t, PLAYER_STATS, `${PLAYERS}/nobody/stats`, 404, 'not_found', 'playerId');
  });

  it('/stats/players: at least one of event_id, team_id, player_id; keyset over (eventId, playerId)', async () => {
    const all = t.app.board.playerBox.map(playerBoxJson).sort(compareBox);
    const event = all[0]!.eventId;
    const team = all.find((r) => t.app.board.playerBox.filter((b) => b.teamId === r.teamId).length > 15)!.teamId;
    const player = all.find((r) => all.filter((x) => x.playerId === r.playerId).length > 1)!.playerId;
    const cases: [string, (r: Json) => boolean][] = [
      [`event_id=${event}`, (r) => r.eventId === event],
      [`team_id=${team}`, (r) => r.teamId === team],
      [`player_id=${player}`, (r) => r.playerId === player],
      [`event_id=${event}&team_id=${all[0]!.teamId}`, (r) => r.eventId === event && r.teamId === all[0]!.teamId],
      [`team_id=${team}&player_id=${player}`, (r) => r.teamId === team && r.playerId === player],
    ];
    for (const [query, keep] of cases) {
      const expected = all.filter(keep);
      const { rows } = await walk(t, STATS_PLAYERS, `${STATS_PLAYERS}?${query}&limit=4`);
      assert.deepEqual(rows, expected, query);
    }
    const teamWalk = await walk(t, STATS_PLAYERS, `${STATS_PLAYERS}?team_id=${team}&limit=3`);
    assert.ok(teamWalk.pages.length > 3);
    assert.ok(new Set(teamWalk.rows.map((r) => r.eventId)).size > 1, 'the walk crosses events, so (eventId, playerId) order is tested');
    const none = await expectError(t, STATS_PLAYERS, STATS_PLAYERS, 400, 'missing_parameter', null);
    assert.match(none.detail, /event_id, team_id or player_id/);
    await expectError(t, STATS_PLAYERS, `${STATS_PLAYERS}?event_id=&limit=5`, 400, 'missing_parameter');
    await expectError(t, STATS_PLAYERS, `${STATS_PLAYERS}?season=2026`, 400, 'missing_parameter');
    const unknown = await t.call(STATS_PLAYERS, `${STATS_PLAYERS}?player_id=nobody`);
    assert.deepEqual(unknown.body.data, []);
    const first = await t.call(STATS_PLAYERS, `${STATS_PLAYERS}?team_id=${team}&limit=2`);
    await expectError(t, STATS_PLAYERS, `${STATS_PLAYERS}?event_id=${event}&cursor=${first.body.nextCursor}`, 400, 'invalid_cursor');
    await expectError(t, STATS_PLAYERS, `${STATS_PLAYERS}?team_id=${team}&limit=0`, 400, 'invalid_parameter', 'limit');
  });
});
