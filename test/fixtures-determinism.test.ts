import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { boardOptionsFromEnv, BoardConfigError } from '../fixtures/boardFromEnv.ts';
import { NOW, boardDigest } from './fixtures-helpers.ts';

const DAY = 86_400_000;

describe('fixture board determinism', () => {
  it('the same (seed, size, NOW) gives byte-identical boards', () => {
    const a = boardDigest(generateBoard({ seed: 42, size: 'small', now: NOW }));
    const b = boardDigest(generateBoard({ seed: 42, size: 'small', now: NOW }));
    assert.equal(a, b);
  });

  it('replaying forEachOdds on one board emits identical data, exactly oddsCount rows', () => {
    const board = generateBoard({ seed: 42, size: 'small', now: NOW });
    assert.equal(boardDigest(board), boardDigest(board));
    let rows = 0;
    board.forEachOdds(() => {
      rows++;
    });
    assert.equal(rows, board.oddsCount);
  });

  it('a different seed gives a different board', () => {
    const a = boardDigest(generateBoard({ seed: 42, size: 'small', now: NOW }));
    const b = boardDigest(generateBoard({ seed: 43, size: 'small', now: NOW }));
    assert.notEqual(a, b);
  });

  it('a different NOW shifts the event window and the history times', () => {
    const a = generateBoard({ seed: 42, size: 'small', now: NOW });
    const later = NOW + 3 * DAY;
    const b = generateBoard({ seed: 42, size: 'small', now: later });
    assert.notEqual(boardDigest(a), boardDigest(b));
    for (const [board, now] of [[a, NOW], [b, later]] as const) {
      const games = board.events.filter((e) => !e.isFutures);
      const starts = games.map((e) => e.startTime);
      assert.ok(Math.min(...starts) >= now - 7 * DAY, 'no game older than 7 days');
      assert.ok(Math.max(...starts) <= now + 14 * DAY, 'no game beyond 14 days');
      let latest = 0;
      board.forEachOdds((row) => {
        latest = Math.max(latest, row.updated);
      });
      assert.ok(latest <= now && latest > now - 3_600_000, 'rows refreshed just before NOW');
    }
    // Rosters depend on the seed only: the same people on any date.
    assert.deepEqual(a.players, b.players);
  });

  it('boardOptionsFromEnv reads BOARD and SEED, with defaults, and names bad values', () => {
    assert.deepEqual(boardOptionsFromEnv({}, NOW), { size: 'medium', seed: 42, now: NOW });
    assert.deepEqual(boardOptionsFromEnv({ BOARD: 'Small', SEED: '7' }, NOW), { size: 'small', seed: 7, now: NOW });
    assert.throws(() => boardOptionsFromEnv({ BOARD: 'huge' }, NOW), (e: unknown) => e instanceof BoardConfigError && e.code === 'invalid_board_size');
    assert.throws(() => boardOptionsFromEnv({ SEED: 'abc' }, NOW), (e: unknown) => e instanceof BoardConfigError && e.code === 'invalid_seed');
  });
});
