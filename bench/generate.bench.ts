// Generation time of the large fixture board: building cold data plus the counting
// pass (generateBoard), then one full replay of the odds stream (forEachOdds).

import { generateBoard } from '../fixtures/generateBoard.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');

export async function benchGenerate(): Promise<Record<string, number | string>> {
  const t0 = performance.now();
  const board = generateBoard({ seed: 42, size: 'large', now: NOW });
  const built = performance.now() - t0;
  let rows = 0;
  let entries = 0;
  const t1 = performance.now();
  board.forEachOdds((_row, history) => {
    rows++;
    entries += history.length;
  });
  const streamed = performance.now() - t1;
  const heapMb = process.memoryUsage().heapUsed / 1048576;
  return {
    'large: generateBoard (cold data + count pass) ms': Math.round(built),
    'large: forEachOdds full replay ms': Math.round(streamed),
    'large: total generation ms': Math.round(built + streamed),
    'large: oddsCount': board.oddsCount,
    'large: rows emitted': rows,
    'large: rows per second (replay)': Math.round(rows / (streamed / 1000)),
    'large: history entries emitted': entries,
    'large: events / players / playerBox rows': `${board.events.length} / ${board.players.length} / ${board.playerBox.length}`,
    'heap used after generation MB': Math.round(heapMb),
  };
}
