import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadBoard } from '../../engine/loadBoard.ts';
import { americanToDecimal, oddsId, type OddsInput } from '../../engine/model.ts';
import { ODDS_FORMATS, type OddsFormat } from '../../engine/rowJson.ts';
import { boardOf, filterOf, makeTestBoard, newEngine, walkAll } from '../helpers/engine-helpers.ts';

/** The served odds row written out independently from an input row. */
function expectedRow(row: OddsInput, format: OddsFormat, updated: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: oddsId(row),
    sportsbook: row.sportsbook,
    league: row.league,
    eventId: row.eventId,
    market: row.market,
    marketSubtype: row.marketSubtype,
    period: row.period,
    selection: row.selection,
    side: row.side,
    teamSide: row.teamSide,
    teamName: row.teamName,
  };
  if (row.dfsMultiplier === null && row.priceAmerican !== null) {
    const decimal = americanToDecimal(row.priceAmerican);
    if (format === 'all' || format === 'american') out.priceAmerican = row.priceAmerican;
    if (format === 'all' || format === 'decimal') out.priceDecimal = decimal;
    if (format === 'probability') out.priceProbability = Math.round((1 / decimal) * 10000) / 10000;
  }
  if (row.line !== null) out.line = row.line;
  if (row.dfsMultiplier !== null) out.dfsMultiplier = row.dfsMultiplier;
  if (row.playerId !== null) out.playerId = row.playerId;
  if (row.playerName !== null) out.playerName = row.playerName;
  out.suspended = row.suspended;
  out.eventStartTime = new Date(row.eventStartTime).toISOString().slice(0, 16);
  out.updated = new Date(updated).toISOString();
  if (row.marketScope !== null) out.marketScope = row.marketScope;
  if (row.segment !== null) out.segment = row.segment;
  return out;
}

test('rowObject follows the odds row field order and presence for every format', () => {
  const board = makeTestBoard(3, 12);
  const { engine } = newEngine();
  loadBoard(engine, boardOf(board));
  for (const row of board.rows) {
    const slot = engine.slotOf(oddsId(row));
    assert.ok(slot >= 0);
    for (const format of ODDS_FORMATS) {
      assert.equal(JSON.stringify(engine.rowObject(slot, format)), JSON.stringify(expectedRow(row, format, row.updated)));
    }
  }
});

test('fast fragments are byte-identical to JSON.stringify(rowObject) for every format, live and removed', () => {
  const board = makeTestBoard(4, 24);
  const { engine, clock } = newEngine();
  loadBoard(engine, boardOf(board));
  // Some rows change (fragments must follow), some are removed (tombstones render "removed": true).
  const changes = [];
  /** id -> suspended, for the rows whose price moved to -125. */
  const moved = new Map<string, boolean>();
  for (let i = 0; i < board.rows.length; i += 7) {
    const slot = engine.slotOf(oddsId(board.rows[i]));
    if (engine.store.priceAmerican[slot] !== 0) {
      changes.push({ op: 'price' as const, slot, priceAmerican: -125, suspended: i % 2 === 0 });
      moved.set(oddsId(board.rows[i]), i % 2 === 0);
    }
  }
  for (const format of ODDS_FORMATS) {
    const page = engine.odds.page(filterOf(), null, 1000);
    engine.odds.render(page, format); // warm the cache before the changes
  }
  clock.advance(1234);
  const changedAt = clock.now();
  engine.apply(changes);
  engine.apply(board.rows.filter((_, i) => i % 11 === 3).map((row) => ({ op: 'remove' as const, id: oddsId(row) })));
  // What each row should now say, from the input rows and the changes alone (not from the engine).
  const inputs = new Map(board.rows.map((row) => [oddsId(row), row]));
  const expectedNow = (id: string, format: OddsFormat): Record<string, unknown> => {
    const input = inputs.get(id);
    assert.ok(input, `${id} is a row of the board`);
    const suspended = moved.get(id);
    return suspended === undefined ? expectedRow(input, format, input.updated) : expectedRow({ ...input, priceAmerican: -125, suspended }, format, changedAt);
  };
  for (const format of ODDS_FORMATS) {
    const slots = walkAll(engine, filterOf(), 97);
    for (let start = 0; start < slots.length; start += 97) {
      const chunk = slots.slice(start, start + 97);
      const page = { slots: Int32Array.from(chunk), count: chunk.length, hasMore: false, lastId: null, maxUpdated: 0 };
      const fast = engine.odds.render(page, format).toString('utf8');
      const reference = chunk.map((slot) => JSON.stringify(engine.rowObject(slot, format))).join(',');
      assert.equal(fast, reference);
      const served = JSON.parse(`[${fast}]`) as Record<string, unknown>[];
      assert.equal(served.length, chunk.length);
      for (const row of served) assert.equal(JSON.stringify(row), JSON.stringify(expectedNow(row.id as string, format)));
    }
    const delta = engine.delta({ leagues: null, sportsbooks: null, markets: null }, 0, null, 1000);
    const body = engine.odds.render(delta, format).toString('utf8');
    const rows = JSON.parse(`[${body}]`) as Record<string, unknown>[];
    const removed = rows.filter((r) => r.removed === true);
    assert.ok(removed.length > 0);
    for (const r of removed) assert.equal(Object.keys(r).at(-1), 'removed');
    for (const r of rows) {
      const { removed: tombstone, updated, ...fields } = r;
      const { updated: _updated, ...expected } = expectedNow(r.id as string, format);
      assert.equal(JSON.stringify(fields), JSON.stringify(expected), `${r.id} in the delta`);
      assert.equal(tombstone === true, board.rows.some((row, i) => i % 11 === 3 && oddsId(row) === r.id), `${r.id} removed or not`);
      assert.equal(typeof updated, 'string');
    }
  }
});

test('fragments survive arena compaction and clears (small cap)', () => {
  const board = makeTestBoard(5, 8);
  const { engine, clock } = newEngine({ fragmentBytesPerFormat: 64 * 1024 });
  loadBoard(engine, boardOf(board));
  for (let round = 0; round < 20; round++) {
    clock.advance(1000);
    const slots = walkAll(engine, filterOf(), 1000);
    engine.apply(slots.filter((_, i) => i % 3 === round % 3).map((slot) => ({ op: 'price' as const, slot, priceAmerican: 100 + round, dfsMultiplier: engine.store.priceAmerican[slot] === 0 ? 1 + round / 100 : undefined, suspended: false })));
    const page = engine.odds.page(filterOf(), null, 300);
    const fast = engine.odds.render(page, 'all').toString('utf8');
    const reference = Array.from(page.slots.subarray(0, page.count), (slot) => JSON.stringify(engine.rowObject(slot, 'all'))).join(',');
    assert.equal(fast, reference);
  }
});

test('DFS rows carry no price fields in any format; probability rounds to 4 places', () => {
  const board = makeTestBoard(6, 4);
  const { engine } = newEngine();
  loadBoard(engine, boardOf(board));
  const dfs = board.rows.find((r) => r.dfsMultiplier !== null)!;
  const book = board.rows.find((r) => r.priceAmerican !== null && r.line !== null)!;
  for (const format of ODDS_FORMATS) {
    const row = engine.rowObject(engine.slotOf(oddsId(dfs)), format);
    assert.ok(!('priceAmerican' in row) && !('priceDecimal' in row) && !('priceProbability' in row));
    assert.equal(row.dfsMultiplier, dfs.dfsMultiplier);
  }
  const probability = engine.rowObject(engine.slotOf(oddsId(book)), 'probability');
  assert.equal(probability.priceProbability, Math.round((1 / americanToDecimal(book.priceAmerican!)) * 10000) / 10000);
  assert.ok(!('priceAmerican' in probability));
  const american = engine.rowObject(engine.slotOf(oddsId(book)), 'american');
  assert.ok('priceAmerican' in american && !('priceDecimal' in american));
});

test('renderInto writes the same bytes as render into a caller buffer', () => {
  const board = makeTestBoard(8, 6);
  const { engine, clock } = newEngine();
  loadBoard(engine, boardOf(board));
  for (const format of ODDS_FORMATS) {
    for (const limit of [1, 2, 50, 1000]) {
      const page = engine.odds.page(filterOf(), null, limit);
      const expected = engine.odds.render(page, format);
      clock.advance(10);
      engine.apply([{ op: 'price', slot: page.slots[0], priceAmerican: engine.store.priceAmerican[page.slots[0]] === 0 ? null : 199, suspended: true }]);
      const fresh = Buffer.from(Array.from(page.slots.subarray(0, page.count), (s) => JSON.stringify(engine.rowObject(s, format))).join(','));
      const length = engine.odds.renderLength(page, format);
      assert.equal(length, fresh.length);
      const target = Buffer.alloc(length + 3, 0x20);
      assert.equal(engine.odds.renderInto(page, format, target, 2), length);
      assert.equal(target.subarray(2, 2 + length).toString(), fresh.toString());
      assert.equal(target[1], 0x20);
      assert.equal(target[2 + length], 0x20);
      assert.ok(expected.length > 0);
    }
  }
});
