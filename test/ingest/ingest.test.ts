// The in-process write path on real files: every change kind submitted through Ingest
// leaves the same board as the engine's own ops applied directly to a twin engine
// (cold kinds: the same rows in SQLite as upserting them directly); a batch with bad
// changes is refused whole with every bad index named; batches in flight see each
// other; a restart (checkpoint + log) gives the same board, and the served
// /snapshot?include_history=true bytes, /edges and /arbitrage equal their answers before.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine, type Change } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { oddsId, type EventRecord, type OddsInput } from '../../engine/model.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { IngestError } from '../../ingest/ingest.ts';
import { startApp } from '../../service/app.ts';
import { openPersistence } from '../../persistence/persistence.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { httpRequest } from '../helpers/server.ts';
import { referenceDoc } from '../helpers/snapshot-helpers.ts';
import { oddsChange, openBoard, tempDataDir, type OpenedBoard } from './ingest-helpers.ts';

const board = testBoard('small');

describe('Ingest over a durable board', () => {
  const dir = tempDataDir();
  const clock = new ManualClock(NOW);
  let opened: OpenedBoard;
  let twin: OddsEngine;
  const twinDb = openPersistence({ path: join(dir, 'twin.db'), env: {} });

  before(async () => {
    opened = await openBoard(dir, clock, board);
    twin = new OddsEngine(clock);
    loadBoard(twin, board);
    twinDb.loadCold(board, { eventsWithOdds: new Set(twin.eventIdsWithLiveRows()) });
  });
  after(async () => {
    await opened.close();
    twinDb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const engine = () => opened.durable.engine;
  const ingest = () => opened.durable.ingest;

  /** Submits `changes` through Ingest and applies `direct` to the twin at the same clock time; the boards must agree. */
  async function both(changes: unknown[], direct: Change[]): Promise<void> {
    clock.advance(1000);
    const result = await ingest().submit(changes);
    const twinResult = twin.apply(direct);
    assert.equal(result.applied, changes.length);
    assert.equal(twinResult.applied, direct.length);
    assertSameBoard();
    assert.equal(result.seq, engine().seq);
  }

  function assertSameBoard(): void {
    assert.equal(engine().seq, twin.seq, 'seq');
    assert.equal(engine().asOf(), twin.asOf(), 'asOf');
    assert.deepEqual(referenceDoc(engine(), true), referenceDoc(twin, true));
    assert.deepEqual(engine().sources.list(), twin.sources.list());
  }

  function liveSlot(test: (slot: number) => boolean): number {
    const s = engine().store;
    for (let slot = 0; slot < s.size; slot++) if (s.isLive(slot) && test(slot)) return slot;
    throw new Error('no such row');
  }
  const bookSlot = () => liveSlot((slot) => engine().store.priceAmerican[slot] !== NO_PRICE && engine().store.books.get(engine().store.book[slot]) === 'pinnacle');
  const dfsSlot = () => liveSlot((slot) => engine().store.priceAmerican[slot] === NO_PRICE);
  const twinSlot = (id: string) => twin.slotOf(id);

  it('price ticks by id (American, decimal, DFS multiplier, suspension only) equal the slot-addressed price op', async () => {
    const book = engine().idOf(bookSlot());
    const dfs = engine().idOf(dfsSlot());
    await both([{ op: 'price', id: book, priceAmerican: -137 }], [{ op: 'price', slot: twinSlot(book), priceAmerican: -137, suspended: false }]);
    await both([{ op: 'price', id: book, priceDecimal: 2.25 }], [{ op: 'price', slot: twinSlot(book), priceAmerican: 125, suspended: false }]);
    await both([{ op: 'price', id: book, suspended: true }], [{ op: 'price', slot: twinSlot(book), priceAmerican: 125, suspended: true }]);
    await both(
      [{ op: 'price', id: dfs, dfsMultiplier: 1.15, suspended: false }],
      [{ op: 'price', slot: twinSlot(dfs), priceAmerican: null, dfsMultiplier: 1.15, suspended: false }],
    );
    assert.equal(engine().rowObject(engine().slotOf(book), 'all').priceAmerican, 125);
  });

  it('odds rows: a new line and an upsert over a live row equal the upsert op; remove equals remove', async () => {
    const s = engine().store;
    const over = liveSlot((slot) => s.priceAmerican[slot] !== NO_PRICE && s.markets.get(s.market[slot]) === 'TOTAL' && s.side[slot] === 3);
    const base = s.rowInput(over);
    const line = base.line! + 10;
    const fresh: OddsInput = { ...base, selectionId: base.selectionId.replace(`-${base.line}`, `-${line}`), selection: base.selection.replace(String(base.line), String(line)), line, priceAmerican: 150, suspended: false, updated: 0 };
    assert.notEqual(fresh.selectionId, base.selectionId);
    await both([oddsChange(fresh)], [{ op: 'upsert', row: fresh }]);
    const moved: OddsInput = { ...fresh, priceAmerican: -120 };
    await both([oddsChange(moved)], [{ op: 'upsert', row: moved }]);
    await both([{ op: 'remove', id: oddsId(fresh) }], [{ op: 'remove', id: oddsId(fresh) }]);
    assert.ok(engine().isTombstone(engine().slotOf(oddsId(fresh))));
  });

  it('an event, odds on it and its status changes in one batch; final tombstones its rows', async () => {
    const teams = board.teams.filter((t) => t.league === 'nba');
    const event: EventRecord = {
      id: 'nba-ingest-game-1',
      league: 'nba',
      homeTeamId: teams[0].id,
      homeTeamName: teams[0].name,
      awayTeamId: teams[1].id,
      awayTeamName: teams[1].name,
      startTime: NOW + 3 * 3600_000,
      status: 'scheduled',
      venueId: null,
      seasonYear: 2026,
      context: { note: 'from a feed' },
      isFutures: false,
    };
    const row: OddsInput = {
      eventId: event.id, sportsbook: 'pinnacle', league: 'nba', market: 'MONEYLINE', marketSubtype: 'MONEYLINE', period: 'FULL',
      selectionId: 'FULL-HOME', selection: teams[0].name, side: 'HOME', teamSide: 'HOME', teamName: teams[0].name, priceAmerican: -150,
      dfsMultiplier: null, line: null, playerId: null, playerName: null, teamId: teams[0].id, suspended: false, eventStartTime: event.startTime,
      updated: 0, marketScope: null, segment: null,
    };
    const { teamId: _derived, ...sent } = oddsChange(row).row as Record<string, unknown>;
    await both(
      [{ op: 'event', event: { ...event, startTime: new Date(event.startTime).toISOString() } }, { op: 'odds', row: sent }, { op: 'status', eventId: event.id, status: 'in_progress' }],
      [{ op: 'event', event }, { op: 'upsert', row }, { op: 'status', eventId: event.id, status: 'in_progress' }],
    );
    assert.equal(engine().event(event.id)?.status, 'in_progress');
    const detail = opened.persistence.events.detail(event.id);
    assert.equal(detail?.homeTeamId, teams[0].id);
    assert.deepEqual(detail?.context, { note: 'from a feed' });
    await both([{ op: 'status', eventId: event.id, status: 'final' }], [{ op: 'status', eventId: event.id, status: 'final' }]);
    assert.ok(engine().isTombstone(engine().slotOf(oddsId(row))));
  });

  it('a new source with its kind, then rows of it', async () => {
    const s = engine().store;
    const base = s.rowInput(bookSlot());
    const row: OddsInput = { ...base, sportsbook: 'novabook', priceAmerican: 110, updated: 0 };
    await both(
      [{ op: 'source', source: { id: 'novabook', name: 'Nova Book', kind: 'retail' } }, oddsChange(row)],
      [{ op: 'source', source: { id: 'novabook', name: 'Nova Book', kind: 'retail' } }, { op: 'upsert', row }],
    );
    assert.equal(engine().sources.kindOf('novabook'), 'retail');
  });

  it('cold records (team, player, season, box score) land in SQLite as the direct upserts do', async () => {
    const team = { id: 'nba-ingest-team', name: 'Ingest City', abbreviation: 'ING', league: 'nba', conference: 'East', division: null, venueId: null };
    const player = { id: 'nba-ingest-player', name: 'Fed Feedson', league: 'nba', teamId: team.id, position: 'G' };
    const season = { id: 'nba-2031', league: 'nba', year: 2031, name: 'NBA 2031', startDate: '2031-10-20', endDate: '2032-06-20', status: 'upcoming' as const, futuresEventId: null };
    const game = board.events.find((e) => e.league === 'nba' && !e.isFutures)!;
    const gamePlayer = board.players.find((p) => p.teamId === game.homeTeamId)!;
    const box = {
      op: 'boxscore',
      eventId: game.id,
      teams: [{ teamId: game.homeTeamId, homeScore: 101, awayScore: 99, result: 1, stats: { rebounds: 40 } }],
      players: [{ playerId: gamePlayer.id, teamId: game.homeTeamId, data: { points: 31 } }],
    };
    clock.advance(1000);
    const result = await ingest().submit([{ op: 'team', team }, { op: 'player', player }, { op: 'season', season }, box]);
    assert.equal(result.applied, 4);
    twinDb.applyColdChanges(
      [
        { op: 'team', team },
        { op: 'player', player },
        { op: 'season', season },
        {
          op: 'boxscore',
          eventId: game.id,
          teams: [{ eventId: game.id, teamId: game.homeTeamId!, homeId: game.homeTeamId!, awayId: game.awayTeamId!, league: 'nba', homeScore: 101, awayScore: 99, result: 1, stats: { rebounds: 40 } }],
          players: [{ eventId: game.id, playerId: gamePlayer.id, teamId: game.homeTeamId!, date: new Date(game.startTime).toISOString().slice(0, 10), data: { points: 31 } }],
        },
      ],
      clock.now(),
    );
    const p = opened.persistence;
    assert.deepEqual(p.teams.get(team.id), twinDb.teams.get(team.id));
    assert.ok(p.teams.get(team.id) !== null);
    assert.deepEqual(p.players.get(player.id), twinDb.players.get(player.id));
    assert.deepEqual(p.seasons.forYear(2031, NOW), twinDb.seasons.forYear(2031, NOW));
    assert.equal(p.seasons.forYear(2031, NOW).filter((s) => s.id === season.id).length, 1);
    assert.deepEqual(p.events.boxScore(game.id), twinDb.events.boxScore(game.id));
    assertSameBoard();
  });

  it('a batch with bad changes is refused whole, naming every bad index; nothing is logged or applied', async () => {
    const book = engine().idOf(bookSlot());
    const dfs = engine().idOf(dfsSlot());
    const seq = engine().seq;
    const logged = opened.durable.log.lastIndex;
    const docBefore = referenceDoc(engine(), true);
    const batch = [
      { op: 'price', id: book, priceAmerican: -150 }, // fine
      { op: 'price', id: book, priceAmerican: 50 }, // inside (-100, 100)
      { op: 'price', id: `${book}x`, priceAmerican: 120 }, // unknown id
      { op: 'price', id: dfs, priceAmerican: 120 }, // DFS rows carry multipliers
      { op: 'status', eventId: board.events[0].id, status: 'exploded' },
      { op: 'odds', row: { ...(oddsChange(engine().store.rowInput(bookSlot())).row as object), eventId: 'no-such-event', id: `no-such-event:pinnacle:MONEYLINE:FULL-HOME` } },
      { op: 'remove', id: book }, // fine
      'not an object',
    ];
    await assert.rejects(ingest().submit(batch), (error: unknown) => {
      assert.ok(error instanceof IngestError);
      assert.equal(error.code, 'invalid_batch');
      assert.deepEqual([...new Set(error.errors.map((e) => e.index))], [1, 2, 3, 4, 5, 7]);
      for (const e of error.errors) assert.ok(typeof e.code === 'string' && typeof e.detail === 'string', JSON.stringify(e));
      assert.equal(error.errors.find((e) => e.index === 1)?.field, 'priceAmerican');
      assert.equal(error.errors.find((e) => e.index === 2)?.code, 'unknown_id');
      assert.equal(error.errors.find((e) => e.index === 5)?.code, 'unknown_event');
      return true;
    });
    assert.equal(engine().seq, seq);
    assert.equal(opened.durable.log.lastIndex, logged);
    assert.deepEqual(referenceDoc(engine(), true), docBefore);
    // a remove after a remove of the same row in one batch: the second sees the first
    await assert.rejects(ingest().submit([{ op: 'remove', id: book }, { op: 'remove', id: book }]), (error: IngestError) => error.errors.length === 1 && error.errors[0].index === 1);
  });

  it('batches in flight together see each other: an event in one, odds on it in the next, before either is durable', async () => {
    const teams = board.teams.filter((t) => t.league === 'nhl');
    const event = { id: 'nhl-ingest-game-2', league: 'nhl', homeTeamId: teams[0].id, homeTeamName: teams[0].name, awayTeamId: teams[1].id, awayTeamName: teams[1].name, startTime: NOW + 7200_000, status: 'scheduled', seasonYear: 2026 };
    const row = {
      id: `${event.id}:fanduel:MONEYLINE:FULL-AWAY`, eventId: event.id, sportsbook: 'fanduel', league: 'nhl', market: 'MONEYLINE', marketSubtype: 'MONEYLINE',
      period: 'FULL', selection: teams[1].name, side: 'AWAY', teamSide: 'AWAY', teamName: teams[1].name, priceDecimal: 1.8,
    };
    clock.advance(1000);
    const first = ingest().submit([{ op: 'event', event }]);
    const second = ingest().submit([{ op: 'odds', row }]);
    const third = ingest().submit([{ op: 'price', id: row.id, priceAmerican: 140 }]);
    const results = await Promise.all([first, second, third]);
    assert.deepEqual(results.map((r) => r.index), [results[0].index, results[0].index + 1, results[0].index + 2]);
    assert.ok(results[0].seq < results[1].seq && results[1].seq < results[2].seq);
    const slot = engine().slotOf(row.id);
    assert.equal(engine().rowObject(slot, 'all').priceAmerican, 140);
    assert.equal(engine().store.rowInput(slot).teamId, teams[1].id, 'teamId derived from the event');
    twin.apply([{ op: 'event', event: { ...event, status: 'scheduled', isFutures: false } }, { op: 'upsert', row: { ...engine().store.rowInput(slot), priceAmerican: -125, updated: 0 } }]);
    twin.apply([{ op: 'price', slot: twin.slotOf(row.id), priceAmerican: 140, suspended: false }]);
  });

  it('a restart (checkpoint + log) restores the same board; the served snapshot bytes, /edges and /arbitrage are unchanged', async () => {
    const paths = ['/api/v1/snapshot?include_history=true', '/api/v1/edges?limit=100', '/api/v1/arbitrage?limit=100', '/api/v1/odds/updated?since=0&limit=1000', '/api/v1/status'];
    const serve = async (engineToServe: OddsEngine) => {
      const app = await startApp({ clock, board, engine: engineToServe, dbPath: join(dir, 'odds.db'), port: 0, env: {}, log: () => {} });
      try {
        const bodies: Buffer[] = [];
        for (const path of paths) {
          const reply = await httpRequest(app.port, path);
          assert.equal(reply.status, 200, path);
          bodies.push(reply.body);
        }
        return bodies;
      } finally {
        await app.close();
      }
    };
    const seq = engine().seq;
    const doc = referenceDoc(engine(), true);
    const servedBefore = await serve(engine());
    await opened.durable.checkpointNow();
    clock.advance(1000);
    const book = engine().idOf(bookSlot());
    await ingest().submit([{ op: 'price', id: book, priceAmerican: -188 }]); // after the checkpoint: replayed from the log
    const after1 = { seq: engine().seq, doc: referenceDoc(engine(), true) };
    const servedAfter = await serve(engine());
    assert.notDeepEqual(servedAfter[0], servedBefore[0]);
    assert.ok(after1.seq > seq);
    assert.notDeepEqual(after1.doc, doc);
    await opened.close();

    opened = await openBoard(dir, clock, board);
    assert.equal(opened.durable.fresh, false);
    assert.equal(opened.durable.restore.replayedRecords, 1);
    assert.equal(engine().seq, after1.seq);
    assert.deepEqual(referenceDoc(engine(), true), after1.doc);
    const servedRestored = await serve(engine());
    paths.forEach((path, i) => assert.ok(servedRestored[i].equals(servedAfter[i]), `${path} differs after the restart`));
  });
});
