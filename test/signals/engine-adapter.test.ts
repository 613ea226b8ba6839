// EngineSignals (the engine adapter of the signal books) on the paths the simulator
// rarely takes: an upsert that moves a row to another line (re-grouped, not priced),
// a removed row revived in its slot, tombstoned slots recycled for new rows after
// the retention window, a finished event dropping its rows, and an unsubscribed
// adapter hearing nothing (arbitrage ticks deferred to the next read settled at the
// close). After each step both books equal the brute force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { bruteForceArbitrage, bruteForceEdges, type OddsRowJson } from '../helpers/bruteForce.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

function setup() {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock, { tombstoneRetentionMs: 60_000 });
  loadBoard(engine, testBoard());
  const signals = new EngineSignals(engine);
  const check = (stage: string) => {
    const rows = boardRows(engine, 'all') as OddsRowJson[];
    assert.deepEqual(signals.books.arbitrage.all(), bruteForceArbitrage(rows), `arbitrage ${stage}`);
    assert.deepEqual(signals.books.edges.all(clock.now()), bruteForceEdges(rows, clock.now(), { minEdge: 0 }), `edges ${stage}`);
  };
  return { clock, engine, signals, check };
}

test('an upsert that changes a row\'s line moves it to the other market group', () => {
  const { clock, engine, signals, check } = setup();
  check('loaded');
  // a sharp over/under row with a DFS pick on the same line, moved to another line and back
  const rows = boardRows(engine, 'all') as OddsRowJson[];
  const pick = rows.find((r) => r.dfsMultiplier !== undefined && r.side === 'OVER' && r.line !== undefined)!;
  const sharp = rows.find((r) => r.sportsbook === 'pinnacle' && r.eventId === pick.eventId && r.marketSubtype === pick.marketSubtype
    && r.side === 'OVER' && r.line === pick.line && r.playerId === pick.playerId)!;
  assert.ok(sharp, 'a sharp quote on the pick\'s line');
  const slot = engine.slotOf(sharp.id);
  const input = engine.store.rowInput(slot);
  const group = signals.groups.groupOf(slot);
  clock.advance(1000);
  engine.apply([{ op: 'upsert', row: { ...input, line: input.line! + 0.5 } }]);
  assert.notEqual(signals.groups.groupOf(slot), group, 'the row left its group');
  check('line moved');
  clock.advance(1000);
  engine.apply([{ op: 'upsert', row: { ...input, line: input.line } }]);
  assert.equal(signals.groups.id[signals.groups.groupOf(slot)], signals.groups.id[group]);
  check('line moved back');
});

test('removal, revival in the same slot, recycled slots and a finished event', () => {
  const { clock, engine, signals, check } = setup();
  const arbs = signals.books.arbitrage.all();
  assert.ok(arbs.length > 0);
  const leg = arbs[0].legs[0].oddsId;
  const slot = engine.slotOf(leg);
  const input = engine.store.rowInput(slot);
  clock.advance(1000);
  engine.apply([{ op: 'remove', id: leg }]);
  assert.ok(!signals.books.arbitrage.all().some((r) => r.legs.some((l) => l.oddsId === leg)));
  check('leg removed');
  clock.advance(1000);
  engine.apply([{ op: 'upsert', row: input }]);
  assert.equal(engine.slotOf(leg), slot, 'revived in its slot');
  check('leg revived');

  // a whole event finishes: its rows become tombstones, then their slots are recycled
  const eventId = arbs[arbs.length - 1].eventId;
  clock.advance(1000);
  engine.apply([{ op: 'status', eventId, status: 'in_progress' }, { op: 'status', eventId, status: 'final' }]);
  assert.ok(!signals.books.arbitrage.all().some((r) => r.eventId === eventId));
  check('event final');
  clock.advance(120_000); // past retention: the next apply recycles those slots
  const donor = (boardRows(engine, 'all') as OddsRowJson[]).filter((r) => r.eventId !== eventId).slice(0, 40);
  const fresh = donor.map((r) => {
    const row = engine.store.rowInput(engine.slotOf(r.id));
    return { ...row, selectionId: `${row.selectionId}-X`, priceAmerican: row.priceAmerican === null ? null : 150 };
  });
  const highWater = engine.store.size;
  engine.apply(fresh.map((row) => ({ op: 'upsert' as const, row })));
  const ids = fresh.map((row) => `${row.eventId}:${row.sportsbook}:${row.marketSubtype}:${row.selectionId}`);
  assert.ok(ids.some((id) => engine.slotOf(id) < highWater), 'some new rows took recycled slots');
  check('recycled slots hold new rows');

  // closed: the adapter no longer hears the engine
  signals.close();
  const version = signals.books.arbitrage.version;
  clock.advance(1000);
  const open = signals.books.arbitrage.all()[0];
  engine.apply([{ op: 'remove', id: open.legs[0].oddsId }]);
  assert.equal(signals.books.arbitrage.version, version);
});

test('one batch that prices, moves, removes and revives the same rows settles in order', () => {
  const { clock, engine, signals, check } = setup();
  // the adapter collects a batch's price ticks and settles them after the batch (or
  // before a structural change in it): each mix below must end as the brute force says
  const arb = signals.books.arbitrage.all()[0];
  const legSlot = engine.slotOf(arb.legs[0].oddsId);
  const otherSlot = engine.slotOf(arb.legs[1].oddsId);
  const legInput = engine.store.rowInput(legSlot);
  const tick = (slot: number, priceAmerican: number, suspended = false) => ({ op: 'price' as const, slot, priceAmerican, suspended });
  clock.advance(1000);
  engine.apply([tick(legSlot, 900), tick(otherSlot, 900), { op: 'remove', id: arb.legs[0].oddsId }, tick(otherSlot, -900)]);
  check('ticks around a removal');
  clock.advance(1000);
  engine.apply([{ op: 'upsert', row: { ...legInput, priceAmerican: 500 } }, tick(legSlot, 950), tick(legSlot, 960, true)]);
  check('revived, then ticked twice');
  clock.advance(1000);
  engine.apply([tick(legSlot, -105), { op: 'upsert', row: { ...legInput, priceAmerican: -110, line: legInput.line === null ? null : legInput.line + 1 } }, tick(legSlot, 300)]);
  check('ticked, moved to another line, ticked');
  assert.equal(signals.arbitragePage({ types: null, leagues: null, eventIds: null, minProfit: 0 }, null, 1000).items.length, signals.books.arbitrage.size);
});

test('ticks deferred to the next read are settled on the board as it stood when the adapter closed', () => {
  const { clock, engine, signals } = setup();
  const arb = signals.books.arbitrage.all()[0];
  assert.ok(arb, 'the test board has an arbitrage');
  // a non-leg quote of the arbing group: a tick on it cannot settle on the tick path
  const rows = boardRows(engine, 'all') as OddsRowJson[];
  const legIds = new Set(arb.legs.map((leg) => leg.oddsId));
  const other = rows.find((r) => signals.groups.groupOf(engine.slotOf(r.id)) === signals.groups.groupOf(engine.slotOf(arb.legs[0].oddsId))
    && !legIds.has(r.id) && r.priceAmerican !== undefined && r.dfsMultiplier === undefined)!;
  assert.ok(other, 'a non-leg book quote in the arbing group');
  const leg = engine.slotOf(arb.legs[0].oddsId);
  clock.advance(1000);
  // the leg pulled (the arb may close) and another quote moved: deferred, not read yet
  engine.apply([{ op: 'price', slot: engine.slotOf(other.id), priceAmerican: other.priceAmerican! > 0 ? other.priceAmerican! + 5 : other.priceAmerican! - 5, suspended: false }, { op: 'price', slot: leg, priceAmerican: -100000, suspended: false }]);
  assert.ok(signals.books.deferredGroups > 0, 'the group waits for a read');
  const atClose = boardRows(engine, 'all') as OddsRowJson[];
  signals.close();
  // the board moves on after the close: the books must not follow it
  clock.advance(1000);
  engine.apply([{ op: 'price', slot: leg, priceAmerican: 900, suspended: false }]);
  assert.deepEqual(signals.books.arbitrage.all(), bruteForceArbitrage(atClose));
});
