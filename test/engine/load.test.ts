// The fixture board (fixtures/generateBoard.ts, 'small') through loadBoard: every row
// lands, indexes equal a brute-force scan, rows render exactly as OddsRow says, histories
// keep the last 50 entries of the board's history.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { createHistoryBuffer, oddsId, type HistoryBuffer, type OddsInput } from '../../engine/model.ts';
import { ODDS_FORMATS } from '../../engine/rowJson.ts';
import { NOW, checkConsistency, filterOf, newEngine, walkAll } from '../helpers/engine-helpers.ts';

test('the small fixture board loads completely and consistently', () => {
  const board = generateBoard({ seed: 42, size: 'small', now: NOW });
  const { engine } = newEngine();
  const result = loadBoard(engine, board);
  assert.equal(result.rows, board.oddsCount);
  assert.equal(engine.liveRows, board.oddsCount);
  checkConsistency(engine);
  let maxUpdated = 0;
  const scratch = createHistoryBuffer(64);
  board.forEachOdds((row: OddsInput, history: HistoryBuffer) => {
    maxUpdated = Math.max(maxUpdated, row.updated);
    const slot = engine.slotOf(oddsId(row));
    assert.ok(slot >= 0, oddsId(row));
    const count = engine.historyInto(slot, scratch);
    const keep = Math.min(history.length, 50);
    assert.equal(count, keep);
    if (keep > 0) {
      const last = history.length - 1;
      assert.equal(scratch.pa[count - 1], history.pa[last]);
      assert.equal(scratch.dm[count - 1], history.dm[last]);
      assert.equal(scratch.su[count - 1], history.su[last]);
      assert.equal(scratch.ls[count - 1], Math.floor(history.ls[last]));
      assert.equal(scratch.fs[0], Math.floor(history.fs[history.length - keep]));
    }
    const rendered = engine.rowObject(slot, 'all');
    assert.equal(rendered.id, oddsId(row));
    assert.equal(rendered.updated, new Date(row.updated).toISOString());
  });
  assert.equal(engine.asOf(), maxUpdated);
  for (const format of ODDS_FORMATS) {
    const slots = walkAll(engine, filterOf(), 1000);
    assert.equal(slots.length, board.oddsCount);
    const page = engine.odds.page(filterOf({ leagues: ['nba'] }), null, 500);
    const fast = engine.odds.render(page, format).toString('utf8');
    assert.equal(fast, Array.from(page.slots.subarray(0, page.count), (s) => JSON.stringify(engine.rowObject(s, format))).join(','));
  }
  const futures = walkAll(engine, filterOf({ scope: 'season' }), 1000);
  assert.ok(futures.length > 0);
  for (const slot of futures) assert.equal(engine.rowObject(slot, 'all').marketScope, 'SEASON');
});
