import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadBoard } from '../../engine/loadBoard.ts';
import { oddsId, type OddsInput } from '../../engine/model.ts';
import { OddsEngine, type ChangeKind } from '../../engine/engine.ts';
import { NOW, boardOf, filterOf, makeTestBoard, mulberry32, newEngine, randomBatch, walkAll } from '../helpers/engine-helpers.ts';

function loaded(games = 6) {
  const board = makeTestBoard(11, games);
  const { engine, clock } = newEngine();
  loadBoard(engine, boardOf(board));
  return { board, engine, clock };
}

function bookRow(board: ReturnType<typeof makeTestBoard>): OddsInput {
  return board.rows.find((r) => r.priceAmerican !== null && r.marketScope === null && r.market === 'TOTAL')!;
}

const ALL = { leagues: null, sportsbooks: null, markets: null };

test('load: one seq for the board, asOf = max updated, counts are live rows', () => {
  const { board, engine } = loaded();
  assert.equal(engine.seq, 1);
  assert.equal(engine.asOf(), Math.max(...board.rows.map((r) => r.updated)));
  assert.equal(engine.liveRows, board.rows.length);
  const status = engine.status();
  assert.equal(status.totalMarkets, board.rows.length);
  assert.equal(status.sportsbooks, new Set(board.rows.map((r) => r.sportsbook)).size);
  assert.equal(engine.bookCounts().reduce((sum, b) => sum + b.marketCount, 0), status.totalMarkets);
  assert.equal(engine.marketCounts().reduce((sum, m) => sum + m.liveCount, 0), status.totalMarkets);
  assert.deepEqual(engine.bookCounts().map((b) => b.id), [...new Set(board.rows.map((r) => r.sportsbook))].sort());
  assert.deepEqual(engine.knownLeagues(), ['nba', 'nfl', 'nhl']);
  assert.equal(engine.tombstoneHorizon(), 0);
});

test('price change appends history; the same price again only refreshes ls and updated', () => {
  const { board, engine, clock } = loaded();
  const row = bookRow(board);
  const slot = engine.slotOf(oddsId(row));
  const before = [...engine.history(slot)];
  const kinds: ChangeKind[] = [];
  engine.subscribe({ rowChanged: (s, kind) => { if (s === slot) kinds.push(kind); } });

  clock.advance(5_000);
  const newPrice = row.priceAmerican === -150 ? -160 : -150;
  let result = engine.apply([{ op: 'price', slot, priceAmerican: newPrice, suspended: row.suspended }]);
  assert.deepEqual(result, { applied: 1, seq: 2 });
  assert.equal(engine.store.updated[slot], clock.now());
  let history = [...engine.history(slot)];
  assert.equal(history.length, Math.min(before.length + 1, 50));
  const last = history.at(-1)!;
  assert.equal(last.pa, newPrice);
  assert.equal(last.fs, Math.floor(clock.now() / 1000));
  assert.equal(last.ls, last.fs);

  clock.advance(7_000);
  result = engine.apply([{ op: 'price', slot, priceAmerican: newPrice, suspended: row.suspended }]);
  assert.deepEqual(result, { applied: 1, seq: 3 });
  history = [...engine.history(slot)];
  assert.equal(history.length, Math.min(before.length + 1, 50), 'same price: no new entry');
  assert.equal(history.at(-1)!.ls, Math.floor(clock.now() / 1000));
  assert.equal(history.at(-1)!.fs, last.fs);
  assert.equal(engine.store.updated[slot], clock.now());

  clock.advance(1_000);
  engine.apply([{ op: 'price', slot, priceAmerican: newPrice, suspended: !row.suspended }]);
  history = [...engine.history(slot)];
  assert.equal(history.at(-1)!.su === true, !row.suspended, 'a suspension toggle is a new entry');
  assert.deepEqual(kinds, ['price', 'price', 'price'], "the 'price' op reports price-only changes");
  assert.equal(engine.asOf(), clock.now());
});

test('invalid changes are not applied and take no seq', () => {
  const { board, engine } = loaded();
  const slot = engine.slotOf(oddsId(bookRow(board)));
  const result = engine.apply([
    { op: 'price', slot, priceAmerican: 50, suspended: false },
    { op: 'price', slot: 10_000_000, priceAmerican: -110, suspended: false },
    { op: 'remove', id: 'nope:nope:nope:nope' },
    { op: 'status', eventId: board.events.find((e) => e.status === 'scheduled')!.id, status: 'final' }, // final needs in_progress first
    { op: 'status', eventId: 'unknown-event', status: 'in_progress' },
  ]);
  assert.deepEqual(result, { applied: 0, seq: 1 });
});

test('remove leaves every live index, keeps a tombstone in the delta feed, upsert revives the same slot', () => {
  const { board, engine, clock } = loaded();
  const row = bookRow(board);
  const id = oddsId(row);
  const slot = engine.slotOf(id);
  const historyBefore = [...engine.history(slot)];
  const kinds: ChangeKind[] = [];
  engine.subscribe({ rowChanged: (s, kind) => { if (s === slot) kinds.push(kind); } });
  const live = engine.liveRows;
  clock.advance(60_000);
  const removeAt = clock.now();
  assert.equal(engine.apply([{ op: 'remove', id }]).applied, 1);
  assert.equal(engine.apply([{ op: 'remove', id }]).applied, 0, 'a tombstone cannot be removed again');
  assert.equal(engine.liveRows, live - 1);
  assert.equal(engine.slotOf(id), slot);
  assert.ok(engine.isTombstone(slot));
  for (const filter of [filterOf(), filterOf({ eventIds: [row.eventId] }), filterOf({ leagues: [row.league] }), filterOf({ sportsbooks: [row.sportsbook] })]) {
    assert.ok(!walkAll(engine, filter, 100).includes(slot));
  }
  const delta = engine.delta(ALL, removeAt, null, 100);
  assert.equal(delta.count, 1);
  assert.equal(delta.slots[0], slot);
  const rendered = JSON.parse(engine.odds.render(delta, 'all').toString());
  assert.equal(rendered.removed, true);
  assert.equal(rendered.updated, new Date(removeAt).toISOString());
  assert.deepEqual([...engine.history(slot)], historyBefore, 'history survives the tombstone');

  clock.advance(1_000);
  assert.equal(engine.apply([{ op: 'upsert', row: { ...row, priceAmerican: 250 } }]).applied, 1);
  assert.equal(engine.slotOf(id), slot);
  assert.ok(engine.isLive(slot));
  assert.ok(walkAll(engine, filterOf({ eventIds: [row.eventId] }), 100).includes(slot));
  assert.equal([...engine.history(slot)].at(-1)!.pa, 250);
  assert.deepEqual(kinds, ['remove', 'insert']);

  // an upsert over the live row may move its line: 'update', not 'price'
  assert.equal(engine.apply([{ op: 'upsert', row: { ...row, priceAmerican: 260 } }]).applied, 1);
  assert.deepEqual(kinds, ['remove', 'insert', 'update']);
});

test('tombstones are recycled after the retention, their slot reused, and the horizon moves', () => {
  const { board, engine, clock } = loaded();
  const row = bookRow(board);
  const id = oddsId(row);
  const slot = engine.slotOf(id);
  clock.advance(1_000);
  const removedAt = clock.now();
  engine.apply([{ op: 'remove', id }]);
  clock.advance(9 * 60_000);
  engine.apply([]);
  assert.ok(engine.isTombstone(slot), 'kept for at least 10 minutes');
  assert.equal(engine.delta(ALL, removedAt, null, 10).count, 1);
  clock.advance(60_000);
  engine.apply([]);
  assert.equal(engine.slotOf(id), -1);
  assert.equal(engine.tombstoneHorizon(), removedAt + 1);
  assert.equal(engine.delta(ALL, removedAt, null, 10).count, 0);
  const fresh: OddsInput = { ...row, selectionId: `${row.selectionId}-new` };
  engine.apply([{ op: 'upsert', row: fresh }]);
  assert.equal(engine.slotOf(oddsId(fresh)), slot, 'the freed slot is reused');
  assert.equal([...engine.history(slot)].length, 1, 'a recycled slot starts a new history');
});

test('status: allowed transitions only; final drops the event rows as tombstones; upserts into a final event are refused', () => {
  const { board, engine, clock } = loaded();
  const event = board.events.find((e) => e.status === 'scheduled' && !e.isFutures)!;
  const rows = board.rows.filter((r) => r.eventId === event.id);
  const changed: string[] = [];
  let removes = 0;
  engine.subscribe({ rowChanged: (_s, kind) => { if (kind === 'remove') removes++; }, eventChanged: (id) => changed.push(id) });
  assert.equal(engine.apply([{ op: 'status', eventId: event.id, status: 'final' }]).applied, 0);
  clock.advance(1_000);
  assert.equal(engine.apply([{ op: 'status', eventId: event.id, status: 'in_progress' }]).applied, 1);
  assert.equal(engine.event(event.id)!.status, 'in_progress');
  assert.equal(engine.liveRows, board.rows.length);
  clock.advance(1_000);
  const live = engine.liveRows;
  const seqBefore = engine.seq;
  assert.equal(engine.apply([{ op: 'status', eventId: event.id, status: 'final' }]).applied, 1);
  assert.equal(engine.liveRows, live - rows.length);
  assert.equal(removes, rows.length);
  assert.equal(engine.seq, seqBefore + 1 + rows.length, 'each tombstone has its own seq');
  assert.deepEqual(changed, [event.id, event.id]);
  assert.ok(!engine.eventIdsWithLiveRows().includes(event.id));
  assert.equal(walkAll(engine, filterOf({ eventIds: [event.id] }), 100).length, 0);
  assert.equal(walkAll(engine, filterOf({ teamId: event.homeTeamId }), 1000).filter((s) => engine.store.event[s] === engine.store.event[engine.slotOf(oddsId(rows[0]))]).length, 0);
  const delta = engine.delta(ALL, clock.now(), null, 1000);
  assert.equal(delta.count, rows.length);
  for (let i = 0; i < delta.count; i++) assert.ok(engine.isTombstone(delta.slots[i]));
  assert.equal(engine.apply([{ op: 'upsert', row: rows[0] }]).applied, 0);
  assert.equal(engine.apply([{ op: 'status', eventId: event.id, status: 'in_progress' }]).applied, 0);
});

test('updated never moves backwards even if the clock does', () => {
  const board = makeTestBoard(12, 2);
  let now = NOW + 10_000;
  const engine = new OddsEngine({ now: () => now });
  loadBoard(engine, boardOf(board));
  const slot = engine.slotOf(oddsId(bookRow(board)));
  engine.apply([{ op: 'price', slot, priceAmerican: 120, suspended: false }]);
  now -= 5_000;
  engine.apply([{ op: 'price', slot, priceAmerican: 130, suspended: false }]);
  assert.equal(engine.store.updated[slot], NOW + 10_000);
});

test('version tokens move only with rows of the driving list', () => {
  const { board, engine, clock } = loaded(9);
  const a = board.rows.find((r) => r.league === 'nba' && r.priceAmerican !== null)!;
  const b = board.rows.find((r) => r.league === 'nfl' && r.priceAmerican !== null)!;
  const nba = filterOf({ leagues: ['nba'] });
  const nflEvent = filterOf({ eventIds: [b.eventId] });
  const v1 = engine.odds.version(nba);
  const e1 = engine.odds.version(nflEvent);
  clock.advance(1000);
  engine.apply([{ op: 'price', slot: engine.slotOf(oddsId(b)), priceAmerican: 333, suspended: false }]);
  assert.equal(engine.odds.version(nba), v1, 'an nfl change leaves the nba version alone');
  assert.notEqual(engine.odds.version(nflEvent), e1);
  engine.apply([{ op: 'price', slot: engine.slotOf(oddsId(a)), priceAmerican: 444, suspended: false }]);
  assert.equal(engine.odds.version(nba), engine.seq);
  assert.equal(engine.odds.version(filterOf()), engine.seq);
  const v2 = engine.odds.version(nba);
  engine.apply([{ op: 'remove', id: oddsId(a) }]);
  assert.notEqual(engine.odds.version(nba), v2, 'membership changes move the version');
});

test('property: an unchanged version token means an unchanged page (lazy versions, log overflow included)', () => {
  for (const logEntries of [16, 1 << 16]) {
    const board = makeTestBoard(13, 9);
    const { engine, clock } = newEngine({ changeLogEntries: logEntries, tombstoneRetentionMs: 5_000 });
    loadBoard(engine, boardOf(board));
    const rand = mulberry32(logEntries);
    const removed: OddsInput[] = [];
    const counter = { n: 0, revivals: 0 };
    const filters = [
      filterOf({ leagues: ['nba'] }),
      filterOf({ leagues: ['nfl'], isMain: true }),
      filterOf({ sportsbooks: ['pinnacle'] }),
      filterOf({ eventIds: [board.events[0].id] }),
      filterOf({ scope: 'season' }),
      filterOf({ teamId: board.events[1].homeTeamId }),
    ];
    const seen = filters.map((filter) => ({ version: engine.odds.version(filter), body: engine.odds.render(engine.odds.page(filter, null, 1000), 'all').toString() }));
    let unchangedChecks = 0;
    for (let round = 0; round < 300; round++) {
      clock.advance(50);
      engine.apply(randomBatch(engine, rand, removed, 1 + Math.floor(rand() * 6), counter));
      filters.forEach((filter, i) => {
        if (rand() < 0.5) return; // not every poll sees every change
        const version = engine.odds.version(filter);
        const body = engine.odds.render(engine.odds.page(filter, null, 1000), 'all').toString();
        if (version === seen[i].version) {
          assert.equal(body, seen[i].body, `filter ${i}: same version ${version}, different rows`);
          unchangedChecks++;
        }
        seen[i] = { version, body };
      });
    }
    assert.ok(unchangedChecks > 50, `unchanged tokens were exercised (${unchangedChecks})`);
  }
});

test('a moved event start is rewritten into every row of the event: each row changes once, its JSON and the signal records echo the new start', async () => {
  const { EngineSignals } = await import('../../engine/signals/engineSignals.ts');
  const { rowObject } = await import('../../engine/rowJson.ts');
  const { board, engine, clock } = loaded();
  const signals = new EngineSignals(engine);
  const event = board.events[0];
  const slots = walkAll(engine, filterOf({ eventIds: [event.id] }), 1000);
  assert.ok(slots.length > 0);
  const kinds = new Map<number, ChangeKind[]>();
  const moves: Array<[string, number]> = [];
  engine.subscribe({ rowChanged: (slot, kind) => kinds.set(slot, [...(kinds.get(slot) ?? []), kind]), eventMoved: (id, start) => moves.push([id, start]) });

  // the same start again changes no row
  const seqBefore = engine.seq;
  engine.apply([{ op: 'event', event: { ...event } }]);
  assert.equal(kinds.size, 0);
  assert.equal(moves.length, 0);
  assert.ok(engine.seq > seqBefore);

  clock.advance(1_000);
  const moved = event.startTime + 26 * 3600_000 + 15 * 60_000;
  const movedText = new Date(moved).toISOString().slice(0, 16);
  engine.apply([{ op: 'event', event: { ...event, startTime: moved } }]);
  assert.deepEqual(moves, [[event.id, moved]]);
  assert.deepEqual(walkAll(engine, filterOf({ eventIds: [event.id] }), 1000).sort(), [...slots].sort(), 'the same rows, found by event');
  for (const slot of slots) {
    assert.deepEqual(kinds.get(slot), ['update'], `row ${engine.idOf(slot)} heard once`);
    assert.equal(engine.store.eventStartTime[slot], moved);
    assert.equal(engine.store.updated[slot], clock.now());
    assert.equal(rowObject(engine.store, slot, 'all').eventStartTime, movedText);
  }
  // rows of other events keep their start
  for (const other of board.events.slice(1)) {
    for (const slot of walkAll(engine, filterOf({ eventIds: [other.id] }), 1000)) assert.equal(engine.store.eventStartTime[slot], other.startTime);
  }
  // whatever the signal books hold for the event echoes the new start
  for (const record of [...signals.books.arbitrage.all(), ...signals.books.edges.all(clock.now())]) {
    if (record.eventId === event.id) assert.equal(record.eventStartTime, movedText);
  }
});
