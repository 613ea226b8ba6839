// Shared by the fixtures tests: board serialization and cached boards.
import { createHash } from 'node:crypto';
import type { Board, BoardOptions, BoardSize } from '../../engine/model.ts';
import { oddsLine } from '../../fixtures/cli.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';

import { NOW } from '../../fixtures/harness/now.ts';
export { NOW };

/** SHA-256 over the cold data and every odds row with its history, in emission order. */
export function boardDigest(board: Board): string {
  const hash = createHash('sha256');
  const { forEachOdds: _stream, ...cold } = board;
  hash.update(JSON.stringify(cold));
  board.forEachOdds((row, history) => {
    hash.update(oddsLine(row, history));
    hash.update('\n');
  });
  return hash.digest('hex');
}

const cache = new Map<string, Board>();

export function board(size: BoardSize, seed = 42, now = NOW): Board {
  const key = `${size}:${seed}:${now}`;
  let b = cache.get(key);
  if (!b) {
    const opts: BoardOptions = { size, seed, now };
    b = generateBoard(opts);
    cache.set(key, b);
  }
  return b;
}
