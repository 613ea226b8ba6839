import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type HistoryBuffer, type OddsInput, createHistoryBuffer } from '../engine/model.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { BoardRowChecker, validateOddsRow, validationContext } from '../fixtures/validateRow.ts';
import { NOW, board } from './fixtures-helpers.ts';

function checkAll(size: 'small' | 'medium', seed = 42, now = NOW): BoardRowChecker {
  const b = size === 'small' && (seed !== 42 || now !== NOW) ? generateBoard({ size, seed, now }) : board(size, seed, now);
  const checker = new BoardRowChecker(validationContext(b));
  b.forEachOdds((row, history) => checker.check(row, history));
  assert.equal(checker.rows, b.oddsCount);
  return checker;
}

function copyHistory(h: HistoryBuffer): HistoryBuffer {
  const c = createHistoryBuffer(64);
  c.length = h.length;
  c.fs.set(h.fs);
  c.ls.set(h.ls);
  c.pa.set(h.pa);
  c.dm.set(h.dm);
  c.su.set(h.su);
  return c;
}

describe('generated odds rows satisfy 2.8, the futures rules and the history rules', () => {
  it('every row of the small board', () => {
    assert.deepEqual(checkAll('small').problems, []);
  });

  it('every row of the medium board', () => {
    assert.deepEqual(checkAll('medium').problems, []);
  });

  it('every row of small boards for any seed and NOW (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2028, 11, 31) }), (seed, now) => {
        const minute = Math.floor(now / 60_000) * 60_000;
        assert.deepEqual(checkAll('small', seed, minute).problems, []);
      }),
      { numRuns: 8 },
    );
  });

  it('the validator rejects rows that break the rules', () => {
    const b = board('small');
    const ctx = validationContext(b);
    const samples = new Map<string, [OddsInput, HistoryBuffer]>();
    b.forEachOdds((row, history) => {
      const key = `${row.market}:${row.marketScope}:${row.sportsbook === 'prizepicks'}`;
      if (!samples.has(key)) samples.set(key, [{ ...row }, copyHistory(history)]);
    });
    const get = (market: string, scope: string | null = null, dfs = false): [OddsInput, HistoryBuffer] => {
      const s = samples.get(`${market}:${scope}:${dfs}`);
      assert.ok(s, `sample ${market} ${scope} ${dfs}`);
      return [{ ...s[0] }, copyHistory(s[1])];
    };
    const expectBroken = (row: OddsInput, history: HistoryBuffer, pattern: RegExp): void => {
      const errors = validateOddsRow(row, history, ctx);
      assert.ok(errors.some((e) => pattern.test(e)), `expected ${pattern} in ${JSON.stringify(errors)}`);
    };
    for (const [row, history] of samples.values()) assert.deepEqual(validateOddsRow(row, history, ctx), []);

    let [row, h] = get('MONEYLINE');
    expectBroken({ ...row, line: -3.5 }, h, /line/);
    expectBroken({ ...row, teamSide: 'NONE' }, h, /teamSide/);
    expectBroken({ ...row, marketSubtype: 'MONEYLINE_X' }, h, /subtype/);
    expectBroken({ ...row, selectionId: `${row.selectionId}:x` }, h, /URL-safe/);
    expectBroken({ ...row, eventId: 'no-such-event' }, h, /unknown event/);
    expectBroken({ ...row, updated: NOW + 1000 }, h, /after now/);
    expectBroken({ ...row, priceAmerican: 50 }, h, /American/);
    expectBroken({ ...row, segment: 'AFC' }, h, /segment/);
    expectBroken({ ...row, eventStartTime: row.eventStartTime + 60_000 }, h, /eventStartTime/);
    [row, h] = get('TOTAL');
    expectBroken({ ...row, teamSide: 'HOME' }, h, /teamSide/);
    expectBroken({ ...row, side: 'HOME' }, h, /side/);
    [row, h] = get('PLAYER_TOTAL', null, true);
    expectBroken({ ...row, priceAmerican: -110 }, h, /DFS/);
    expectBroken({ ...row, playerId: null, playerName: null }, h, /playerId/);
    [row, h] = get('CATEGORICAL', 'SEASON');
    expectBroken({ ...row, teamSide: 'HOME' }, h, /teamSide/);
    expectBroken({ ...row, marketScope: null }, h, /scope/);
    expectBroken({ ...row, side: 'OVER' }, h, /side/);
    // history: overlap, last entry out of step with the row
    [row, h] = get('SPREAD');
    const bad = copyHistory(h);
    bad.pa[bad.length - 1] = bad.pa[bad.length - 1] === -110 ? -120 : -110;
    expectBroken(row, bad, /last pa/);
    expectBroken({ ...row, suspended: !row.suspended }, h, /last su/);
    if (h.length > 1) {
      const overlap = copyHistory(h);
      overlap.fs[1] = overlap.ls[0];
      expectBroken(row, overlap, /overlaps/);
    }
  });
});
