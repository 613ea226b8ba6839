// Database file, pragmas, migrations, indexes in keyset order, and loadCold
// (one transaction, skip on reuse, status reconciliation, replace on a new board).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { dbPathFromEnv, DEFAULT_DB_PATH, migrate, openDatabase, schemaVersion, type Db } from '../../persistence/database.ts';
import { boardKey, loadCold } from '../../persistence/loadCold.ts';
import { openPersistence } from '../../persistence/persistence.ts';
import { MIGRATIONS } from '../../persistence/schema.ts';
import { NOW, tempDbPath, tinyBoard } from '../../fixtures/harness/persistence-fixture.ts';

function count(db: Db, table: string): number {
  return db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
}

describe('openDatabase', () => {
  const tmp = tempDbPath();
  after(() => tmp.cleanup());

  it('creates the folder and file, with WAL, synchronous NORMAL and foreign keys', () => {
    assert.equal(existsSync(tmp.path), false);
    const db = openDatabase(tmp.path);
    assert.equal(existsSync(tmp.path), true);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('synchronous', { simple: true }), 1);
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(schemaVersion(db), MIGRATIONS.length);
    db.close();
  });

  it('does not run migrations twice and refuses a newer schema', () => {
    const db = openDatabase(tmp.path);
    assert.equal(migrate(db), MIGRATIONS.length);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    assert.throws(() => openDatabase(tmp.path), /newer than this build/);
  });

  it('DB_PATH picks the file, ./data/odds.db by default', () => {
    assert.equal(dbPathFromEnv({}), DEFAULT_DB_PATH);
    assert.equal(DEFAULT_DB_PATH, './data/odds.db');
    assert.equal(dbPathFromEnv({ DB_PATH: '/x/y.db' }), '/x/y.db');
    assert.equal(dbPathFromEnv({ DATA_DIR: '/srv/odds' }), '/srv/odds/odds.db', 'the keys CLI finds the file npm start keeps in DATA_DIR');
    assert.equal(dbPathFromEnv({ DATA_DIR: '/srv/odds', DB_PATH: '/x/y.db' }), '/x/y.db');
  });
});

describe('indexes serve every keyset order without sorting', () => {
  const tmp = tempDbPath();
  let db: Db;
  before(() => {
    db = openDatabase(tmp.path);
  });
  after(() => {
    db.close();
    tmp.cleanup();
  });

  const queries: [string, string][] = [
    ['events window', 'SELECT id FROM events WHERE is_futures = 0 AND start_time >= 1 AND start_time < 2 AND (start_time, id) > (0, \'\') ORDER BY start_time, id LIMIT 5'],
    ['events by league', "SELECT id FROM events WHERE league = 'nba' AND (start_time, id) > (0, '') ORDER BY start_time, id LIMIT 5"],
    ['events by status', "SELECT id FROM events WHERE status = 'final' AND (start_time, id) > (0, '') ORDER BY start_time, id LIMIT 5"],
    ['teams by league', "SELECT id FROM teams WHERE league = 'nba' AND id > '' ORDER BY id LIMIT 5"],
    ['players by team', "SELECT id FROM players WHERE team_id = 'x' AND id > '' ORDER BY id LIMIT 5"],
    ['players by league', "SELECT id FROM players WHERE league = 'nba' AND id > '' ORDER BY id LIMIT 5"],
    ['player box by event', "SELECT event_id FROM player_box WHERE event_id = 'e' AND (event_id, player_id) > ('', '') ORDER BY event_id, player_id LIMIT 5"],
    ['player box by team', "SELECT event_id FROM player_box WHERE team_id = 't' AND (event_id, player_id) > ('', '') ORDER BY event_id, player_id LIMIT 5"],
    ['player box by player', "SELECT event_id FROM player_box WHERE player_id = 'p' AND (event_id, player_id) > ('', '') ORDER BY event_id, player_id LIMIT 5"],
  ];
  for (const [name, sql] of queries) {
    it(name, () => {
      const plan = (db.prepare('EXPLAIN QUERY PLAN ' + sql).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
      assert.match(plan, /USING (COVERING )?INDEX|USING PRIMARY KEY/, plan);
      assert.doesNotMatch(plan, /TEMP B-TREE|SCAN (events|teams|players|player_box)\b(?! USING)/, plan);
    });
  }
});

describe('loadCold', () => {
  const tmp = tempDbPath();
  after(() => tmp.cleanup());
  const board = tinyBoard();

  it('loads every cold array in one go and records the board in meta', () => {
    const db = openDatabase(tmp.path);
    const result = loadCold(db, board);
    assert.equal(result.loaded, true);
    assert.equal(result.boardKey, '7:small:2026-11-21');
    const expected = {
      leagues: board.leagues.length, seasons: board.seasons.length, venues: board.venues.length, teams: board.teams.length,
      players: board.players.length, events: board.events.length, teamBox: board.teamBox.length, playerBox: board.playerBox.length,
    };
    assert.deepEqual(result.counts, expected);
    assert.equal(count(db, 'events'), board.events.length);
    assert.equal(count(db, 'player_box'), board.playerBox.length);
    assert.equal(count(db, 'team_box'), board.teamBox.length);
    assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'cold_board'").pluck().get(), boardKey(board));
    // hasOdds from the board's odds stream: exactly the priced events.
    const withOdds = db.prepare('SELECT id FROM events WHERE has_odds = 1 ORDER BY id').pluck().all();
    const priced = new Set<string>();
    board.forEachOdds((row) => priced.add(row.eventId));
    assert.deepEqual(withOdds, [...priced].sort());
    db.close();
  });

  it('skips a board already loaded (same seed, size and day of NOW), even at another hour', () => {
    const db = openDatabase(tmp.path);
    const later = tinyBoard({ now: NOW + 3 * 3_600_000 });
    db.prepare("UPDATE events SET context = '{\"marker\":1}'").run();
    const result = loadCold(db, later);
    assert.equal(result.loaded, false);
    assert.equal(db.prepare("SELECT count(*) FROM events WHERE context = '{\"marker\":1}'").pluck().get(), board.events.length);
    db.close();
  });

  it('on reuse, brings event statuses back to the board (the engine restarts from it)', () => {
    const db = openDatabase(tmp.path);
    const id = board.events.find((e) => e.status === 'scheduled')!.id;
    db.prepare("UPDATE events SET status = 'final' WHERE id = ?").run(id);
    const result = loadCold(db, board, { eventsWithOdds: new Set() });
    assert.equal(result.loaded, false);
    assert.equal(db.prepare('SELECT status FROM events WHERE id = ?').pluck().get(id), 'scheduled');
    // The given set says no event has odds now.
    assert.equal(db.prepare('SELECT count(*) FROM events WHERE has_odds = 1').pluck().get(), 0);
    assert.ok(result.reconciled >= 1);
    db.close();
  });

  it('replaces the cold data when the board differs, and keeps API keys', () => {
    const p = openPersistence({ path: tmp.path, flushIntervalMs: 0 });
    const { key } = p.apiKeys.create({ plan: 'FREE', label: 'keep me' });
    p.close();
    const db = openDatabase(tmp.path);
    const other = tinyBoard({ seed: 8 });
    const result = loadCold(db, other);
    assert.equal(result.loaded, true);
    assert.equal(count(db, 'events'), other.events.length);
    assert.equal(db.prepare("SELECT count(*) FROM events WHERE context LIKE '%marker%'").pluck().get(), 0);
    db.close();
    const again = openPersistence({ path: tmp.path, flushIntervalMs: 0 });
    assert.ok(again.apiKeys.lookup(key));
    again.close();
  });

  it('loads parent tables fully before children when both span several insert batches', () => {
    const fresh = tempDbPath();
    try {
      const big = tinyBoard();
      // 130 teams and 390 players: neither fits one 64-row batch, and each team's
      // players come right behind it.
      for (let t = 0; t < 130; t++) {
        const id = `nba-x${String(t).padStart(3, '0')}`;
        big.teams.push({ id, name: `Team ${t}`, abbreviation: `X${t}`, league: 'nba', conference: null, division: null, venueId: null });
        for (let n = 1; n <= 3; n++) big.players.push({ id: `${id}-p0${n}`, name: `P ${t}.${n}`, league: 'nba', teamId: id, position: 'F' });
      }
      const db = openDatabase(fresh.path);
      const result = loadCold(db, big);
      assert.equal(result.counts.teams, big.teams.length);
      assert.equal(count(db, 'players'), big.players.length);
      db.close();
    } finally {
      fresh.cleanup();
    }
  });

  it('rolls the whole load back when any row breaks a foreign key', () => {
    const fresh = tempDbPath();
    try {
      const db = openDatabase(fresh.path);
      const broken = tinyBoard();
      broken.players.push({ id: 'nba-ghost-p01', name: 'Ghost', league: 'nba', teamId: 'nba-ghost', position: 'G' });
      assert.throws(() => loadCold(db, broken), /FOREIGN KEY/);
      for (const table of ['leagues', 'teams', 'players', 'events', 'meta']) assert.equal(count(db, table), 0, table);
      db.close();
    } finally {
      fresh.cleanup();
    }
  });
});

describe('data versions', () => {
  const tmp = tempDbPath();
  after(() => tmp.cleanup());

  it('move on load and on status writes that change something, and not otherwise', () => {
    const p = openPersistence({ path: tmp.path, flushIntervalMs: 0 });
    const board = tinyBoard();
    const v0 = p.version();
    p.loadCold(board);
    const v1 = p.version();
    assert.notEqual(v1, v0);
    assert.equal(p.changedAt('teams'), NOW);
    const teams = p.version('teams');
    const events = p.version('events');
    const id = board.events.find((e) => e.status === 'scheduled')!.id;

    assert.equal(p.updateEventStatuses([{ id, status: 'scheduled' }], NOW + 1000), 0);
    assert.equal(p.version(), v1, 'a write that changes nothing keeps the version');

    assert.equal(p.updateEventStatuses([{ id, status: 'in_progress' }, { id: 'no-such-event', status: 'final' }], NOW + 2000), 1);
    assert.notEqual(p.version(), v1);
    assert.notEqual(p.version('events'), events);
    assert.equal(p.version('teams'), teams, 'teams did not change');
    assert.equal(p.changedAt('events'), NOW + 2000);

    const v2 = p.version();
    p.loadCold(board); // same board: skipped, but statuses go back to the board's
    assert.notEqual(p.version(), v2);
    const v3 = p.version();
    p.loadCold(board);
    assert.equal(p.version(), v3, 'nothing to reconcile, nothing changed');
    p.close();
  });

  it('start from the load time of a reused database', () => {
    const p = openPersistence({ path: tmp.path, flushIntervalMs: 0 });
    assert.equal(p.changedAt('events'), NOW);
    p.close();
  });
});
