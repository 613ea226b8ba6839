// Events repository over a real SQLite file: every filter of list(), the default
// window's edges, keyset order and page walks, detail (scores once a box score exists), box score, and the
// status writes the engine flushes.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { EventRecord } from '../../engine/model.ts';
import { defaultEventWindow, type EventListQuery } from '../../persistence/eventsRepository.ts';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';
import type { EventKey, EventRow } from '../../persistence/rows.ts';
import { NOW, startMs, tempDbPath, tinyBoard } from '../../fixtures/harness/persistence-fixture.ts';

const board = tinyBoard();
const tmp = tempDbPath();
let p: Persistence;

before(() => {
  p = openPersistence({ path: tmp.path, flushIntervalMs: 0 });
  p.loadCold(board);
});
after(() => {
  p.close();
  tmp.cleanup();
});

const EVENT_FIELDS = ['id', 'homeTeamId', 'homeTeamName', 'awayTeamId', 'awayTeamName', 'startTime', 'status', 'league', 'hasOdds', 'venueId', 'seasonYear', 'context'];

/** Every row of a query, walked page by page. */
function walk(q: Omit<EventListQuery, 'after' | 'limit'>, limit: number): EventRow[] {
  const rows: EventRow[] = [];
  let after: EventKey | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page = p.events.list({ ...q, after, limit });
    assert.ok(page.rows.length <= limit);
    rows.push(...page.rows);
    if (page.next === null) return rows;
    assert.equal(page.rows.length, limit, 'only the last page may be short');
    after = page.next;
  }
  throw new Error('page walk did not end');
}

/** What a query must return, worked out from the board in plain JS. */
function expected(q: Omit<EventListQuery, 'after' | 'limit'>): string[] {
  const leagues = q.leagues?.map((l) => l.toLowerCase());
  return board.events
    .filter((e: EventRecord) =>
      (leagues === undefined || leagues.includes(e.league)) &&
      (q.teamId === undefined || e.homeTeamId === q.teamId || e.awayTeamId === q.teamId) &&
      (q.status === undefined || e.status === q.status) &&
      (q.status !== undefined || q.includeFutures === true || !e.isFutures) &&
      (q.startsAfter === null || e.startTime >= q.startsAfter) &&
      (q.startsBefore === null || e.startTime < q.startsBefore))
    .sort((a, b) => a.startTime - b.startTime || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((e) => e.id);
}

const defaultWindow = defaultEventWindow(NOW);

describe('events.list', () => {
  it('rows carry the event list fields in the documented order, startTime as YYYY-MM-DDTHH:mmZ and context as an object', () => {
    const { rows } = p.events.list({ ...defaultWindow, limit: 100 });
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), EVENT_FIELDS);
      assert.match(row.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\dZ$/);
      assert.equal(typeof row.context, 'object');
      assert.equal(typeof row.hasOdds, 'boolean');
      const source = board.events.find((e) => e.id === row.id)!;
      assert.equal(startMs(row.startTime), source.startTime);
      assert.deepEqual(row.context, source.context);
      assert.equal(row.homeTeamName, source.homeTeamName);
      assert.equal(row.venueId, source.venueId);
      assert.equal(row.seasonYear, source.seasonYear);
    }
    const mia = rows.find((r) => r.id === 'nba-20261121-mia-lal')!;
    assert.equal(mia.startTime, '2026-11-21T12:00Z');
    assert.equal(mia.hasOdds, true);
    assert.equal(rows.find((r) => r.status === 'postponed')!.hasOdds, false);
  });

  it('default window is now (inclusive) to now + 14 days (exclusive); futures anchors stay out', () => {
    assert.deepEqual(defaultWindow, { startsAfter: NOW, startsBefore: NOW + 14 * 86_400_000 });
    const ids = p.events.list({ ...defaultWindow, limit: 1000 }).rows.map((r) => r.id);
    assert.deepEqual(ids, expected(defaultWindow));
    assert.ok(ids.includes('nba-20261121-mia-lal'), 'starts exactly at now');
    assert.ok(ids.includes('nba-20261205-lal-mia'), 'starts a minute before now + 14 d');
    assert.ok(!ids.includes('nba-20261205-bos-mia'), 'starts exactly at now + 14 d');
    assert.ok(!ids.includes('nba-20261121-bos-nyk'), 'started an hour ago');
    assert.ok(!ids.some((id) => id.endsWith('-futures')));
    assert.ok(!ids.some((id) => board.events.find((e) => e.id === id)!.status === 'final'));
  });

  it('null bounds open the window', () => {
    const all = p.events.list({ startsAfter: null, startsBefore: null, limit: 1000 }).rows;
    assert.equal(all.length, board.events.filter((e) => !e.isFutures).length);
    const past = p.events.list({ startsAfter: null, startsBefore: NOW, limit: 1000 }).rows;
    assert.ok(past.every((r) => startMs(r.startTime) < NOW));
    assert.deepEqual(past.map((r) => r.id), expected({ startsAfter: null, startsBefore: NOW }));
  });

  it('leagues: any-of, case-insensitive; an empty list matches nothing', () => {
    const q = { startsAfter: null, startsBefore: null };
    const nfl = p.events.list({ ...q, leagues: ['NFL'], limit: 1000 }).rows;
    assert.ok(nfl.length > 0 && nfl.every((r) => r.league === 'nfl'));
    assert.deepEqual(nfl.map((r) => r.id), expected({ ...q, leagues: ['nfl'] }));
    const both = p.events.list({ ...q, leagues: ['nfl', 'Nba'], limit: 1000 }).rows.map((r) => r.id);
    assert.deepEqual(both, expected(q));
    assert.deepEqual(p.events.list({ ...q, leagues: ['mlb'], limit: 10 }).rows, []);
    assert.deepEqual(p.events.list({ ...q, leagues: [], limit: 10 }), { rows: [], next: null });
  });

  it('teamId matches home or away', () => {
    const q = { startsAfter: null, startsBefore: null, teamId: 'nba-bos' };
    const rows = p.events.list({ ...q, limit: 1000 }).rows;
    assert.ok(rows.some((r) => r.homeTeamId === 'nba-bos') && rows.some((r) => r.awayTeamId === 'nba-bos'));
    assert.deepEqual(rows.map((r) => r.id), expected(q));
  });

  it('status filters, and brings futures anchors in', () => {
    const q = { startsAfter: null, startsBefore: null, status: 'in_progress' };
    const rows = p.events.list({ ...q, limit: 1000 }).rows.map((r) => r.id);
    assert.deepEqual(rows, ['nba-20261121-bos-nyk', 'nfl-2026-futures', 'nba-2026-futures']);
    assert.deepEqual(rows, expected(q));
    const anchor = p.events.list({ ...q, leagues: ['nfl'], limit: 10 }).rows[0]!;
    assert.equal(anchor.homeTeamId, null);
    assert.equal(anchor.startTime, '2027-02-15T00:00Z');
    assert.deepEqual(p.events.list({ ...q, status: 'final', leagues: ['nfl'], limit: 10 }).rows.map((r) => r.id), ['nfl-20261119-kc-buf']);
  });

  it('includeFutures brings anchors into a window that holds them', () => {
    const q = { startsAfter: NOW, startsBefore: Date.parse('2028-01-01T00:00:00Z') };
    const without = p.events.list({ ...q, limit: 1000 }).rows.map((r) => r.id);
    const withF = p.events.list({ ...q, includeFutures: true, limit: 1000 }).rows.map((r) => r.id);
    assert.ok(!without.some((id) => id.endsWith('-futures')));
    assert.deepEqual(withF.filter((id) => id.endsWith('-futures')), ['nfl-2026-futures', 'nba-2026-futures']);
    assert.deepEqual(withF, expected({ ...q, includeFutures: true }));
  });

  it('hasOdds selects events with (or without) live markets', () => {
    const q = { startsAfter: null, startsBefore: null };
    const live = p.events.list({ ...q, hasOdds: true, limit: 1000 }).rows;
    assert.ok(live.length > 0 && live.every((r) => r.hasOdds && (r.status === 'scheduled' || r.status === 'in_progress')));
    const dead = p.events.list({ ...q, hasOdds: false, limit: 1000 }).rows;
    assert.ok(dead.every((r) => !r.hasOdds));
    assert.equal(live.length + dead.length, p.events.list({ ...q, limit: 1000 }).rows.length);
  });

  it('orders by (startTime, id): events sharing a start time come in id order', () => {
    const rows = p.events.list({ startsAfter: null, startsBefore: null, limit: 1000 }).rows;
    for (let i = 1; i < rows.length; i++) {
      const a = rows[i - 1]!;
      const b = rows[i]!;
      const ta = startMs(a.startTime);
      const tb = startMs(b.startTime);
      assert.ok(ta < tb || (ta === tb && a.id < b.id), `${a.id} before ${b.id}`);
    }
    const tied = rows.filter((r) => r.startTime === '2026-11-22T00:00Z').map((r) => r.id);
    assert.deepEqual(tied, ['nba-20261122-bos-lal', 'nba-20261122-nyk-mia', 'nfl-20261122-phi-dal']);
  });

  it('page walks return every row exactly once, in order, for any filters and page size', () => {
    const teams = [undefined, 'nba-bos', 'nfl-kc', 'nba-mia'];
    const statuses = [undefined, 'scheduled', 'in_progress', 'final'];
    const leagueSets = [undefined, ['nba'], ['nfl'], ['NBA', 'nfl']];
    const bounds = [null, NOW - 5 * 86_400_000, NOW, NOW + 86_400_000, NOW + 14 * 86_400_000];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom(...teams),
        fc.constantFrom(...statuses),
        fc.constantFrom(...leagueSets),
        fc.constantFrom(...bounds),
        fc.constantFrom(...bounds),
        fc.boolean(),
        (limit, teamId, status, leagues, startsAfter, startsBefore, includeFutures) => {
          const q = { teamId, status, leagues, startsAfter, startsBefore, includeFutures };
          const ids = walk(q, limit).map((r) => r.id);
          assert.deepEqual(ids, expected(q));
          assert.equal(new Set(ids).size, ids.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('listJson is byte for byte JSON.stringify of list() rows, with the same count and next', () => {
    const tricky = p.events.listJson({ ...defaultWindow, limit: 1 });
    assert.equal(tricky.json, JSON.stringify(p.events.list({ ...defaultWindow, limit: 1 }).rows[0]));
    assert.match(tricky.json, /"context":\{"officials":\["Ref \\"A\\""/);
    const teams = [undefined, 'nba-bos', 'nfl-kc'];
    const bounds = [null, NOW - 5 * 86_400_000, NOW, NOW + 14 * 86_400_000];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom(...teams),
        fc.constantFrom(undefined, 'scheduled', 'in_progress'),
        fc.constantFrom(undefined, ['nba'], ['nfl', 'nba'], []),
        fc.constantFrom(...bounds),
        fc.constantFrom(...bounds),
        fc.boolean(),
        fc.constantFrom(undefined, true, false),
        (limit, teamId, status, leagues, startsAfter, startsBefore, includeFutures, hasOdds) => {
          const q = { teamId, status, leagues, startsAfter, startsBefore, includeFutures, hasOdds, limit };
          const page = p.events.list(q);
          const json = p.events.listJson(q);
          assert.equal(json.json, page.rows.map((r) => JSON.stringify(r)).join(','));
          assert.equal(json.count, page.rows.length);
          assert.deepEqual(json.next, page.next);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('next is null exactly when the page is the last one', () => {
    const all = expected(defaultWindow);
    const full = p.events.list({ ...defaultWindow, limit: all.length });
    assert.equal(full.next, null);
    const short = p.events.list({ ...defaultWindow, limit: all.length - 1 });
    assert.deepEqual(short.next, { startTime: board.events.find((e) => e.id === all[all.length - 2])!.startTime, id: all[all.length - 2] });
  });

  it('refuses a limit below 1', () => {
    assert.throws(() => p.events.list({ ...defaultWindow, limit: 0 }), { code: 'invalid_limit' });
  });
});

describe('events.detail', () => {
  it('adds homeScore/awayScore once a box score exists', () => {
    const d = p.events.detail('nba-20261118-lal-bos')!;
    const box = board.teamBox.find((b) => b.eventId === 'nba-20261118-lal-bos')!;
    assert.deepEqual(Object.keys(d), [...EVENT_FIELDS, 'homeScore', 'awayScore']);
    assert.equal(d.homeScore, box.homeScore);
    assert.equal(d.awayScore, box.awayScore);
    assert.equal(d.status, 'final');
  });

  it('has no score fields before the box score exists', () => {
    const d = p.events.detail('nba-20261121-mia-lal')!;
    assert.deepEqual(Object.keys(d), EVENT_FIELDS);
  });

  it('answers futures anchors and null for unknown ids', () => {
    const d = p.events.detail('nba-2026-futures')!;
    assert.equal(d.homeTeamId, null);
    assert.equal(d.status, 'in_progress');
    assert.equal(p.events.detail('nba-20990101-x-y'), null);
  });
});

describe('events.boxScore', () => {
  it('holds the event, its two team rows (home first) and every player row', () => {
    const id = 'nba-20261120-nyk-mia';
    const box = p.events.boxScore(id)!;
    assert.deepEqual(Object.keys(box), ['eventId', 'league', 'teams', 'players']);
    assert.equal(box.eventId, id);
    assert.equal(box.league, 'nba');
    assert.deepEqual(box.teams.map((t) => t.teamId), ['nba-mia', 'nba-nyk']);
    assert.deepEqual(Object.keys(box.teams[0]!), ['eventId', 'teamId', 'homeId', 'awayId', 'league', 'homeScore', 'awayScore', 'result', 'stats']);
    const source = board.teamBox.find((b) => b.eventId === id && b.teamId === 'nba-mia')!;
    assert.deepEqual(box.teams[0], { ...source });
    assert.equal(box.teams[0]!.result + box.teams[1]!.result, 0);
    const players = board.playerBox.filter((b) => b.eventId === id).sort((a, b) => (a.playerId < b.playerId ? -1 : 1));
    assert.deepEqual(box.players, players.map((b) => ({ ...b })));
    assert.deepEqual(Object.keys(box.players[0]!), ['eventId', 'playerId', 'teamId', 'date', 'data']);
  });

  it('is empty for an event without a box score, null for an unknown event', () => {
    assert.deepEqual(p.events.boxScore('nba-20261121-mia-lal'), { eventId: 'nba-20261121-mia-lal', league: 'nba', teams: [], players: [] });
    assert.equal(p.events.boxScore('nope'), null);
  });
});

describe('updateEventStatuses', () => {
  it('writes status and hasOdds changes, seen by the next read', () => {
    const id = 'nba-20261122-bos-lal';
    const n = p.updateEventStatuses([{ id, status: 'in_progress' }, { id: 'nba-20261121-bos-nyk', status: 'final', hasOdds: false }], NOW + 60_000);
    assert.equal(n, 2);
    assert.equal(p.events.detail(id)!.status, 'in_progress');
    const done = p.events.detail('nba-20261121-bos-nyk')!;
    assert.equal(done.status, 'final');
    assert.equal(done.hasOdds, false);
    const live = p.events.list({ startsAfter: null, startsBefore: null, status: 'in_progress', limit: 10 }).rows.map((r) => r.id);
    assert.ok(live.includes(id) && !live.includes('nba-20261121-bos-nyk'));
  });

  it('rejects a status outside the event statuses and writes nothing of that batch', () => {
    const id = 'nba-20261123-mia-bos';
    assert.throws(() => p.updateEventStatuses([{ id, status: 'final' }, { id, status: 'halftime' as never }], NOW), { code: 'invalid_status' });
    assert.equal(p.events.detail(id)!.status, 'scheduled');
  });
});

describe('events.startTimes', () => {
  it('is every event start (anchors included), ascending, as epoch ms', () => {
    const times = p.events.startTimes();
    assert.ok(times instanceof Float64Array);
    assert.deepEqual(Array.from(times), board.events.map((e) => e.startTime).sort((a, b) => a - b));
    assert.ok(board.events.some((e) => e.isFutures));
  });
});
