// The engine on a fixture board (large by default; ENGINE_BENCH_SIZE=small|medium|large):
// - bytes per odds row, heap + typed arrays (process.memoryUsage heapUsed + arrayBuffers
//   after global.gc), without and with price history, each measured in a child process
//   started with --expose-gc so the two loads do not pollute each other; plus RSS;
// - apply throughput of 'price' changes in updates/s (tinybench, batches of 20k);
// - a 100-row index slice (page), page + render from cached fragments, and the ways
//   of joining fragments (arena copy into a fresh Buffer, into a reused buffer, vs
//   string join + Buffer.from). Measured: the copies take ~1 µs per 100 rows; a fresh
//   42 KB Buffer costs ~20 µs, string join + Buffer.from ~50 µs.
// Targets: >= 2M updates/s, <= 400 bytes/row without history, < 2 GB RSS
// for the large board with full history.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { ManualClock } from '../engine/clock.ts';
import { OddsEngine, type Change } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import { createHistoryBuffer, type Board, type BoardSize } from '../engine/model.ts';
import type { OddsFilter } from '../engine/oddsQuery.ts';
import { rowJsonText } from '../engine/rowJson.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const MEMORY_FLAG = '--engine-memory';

function benchSize(): BoardSize {
  const size = process.env.ENGINE_BENCH_SIZE ?? 'large';
  if (size !== 'small' && size !== 'medium' && size !== 'large') throw new Error(`ENGINE_BENCH_SIZE ${size}`);
  return size;
}

function filterOf(patch: Partial<OddsFilter> = {}): OddsFilter {
  return { leagues: null, sportsbooks: null, markets: null, eventIds: null, playerId: null, teamId: null, scope: null, isMain: false, ...patch };
}

/** The same board with every history emptied (rows only). */
function withoutHistory(board: Board): Board {
  const empty = createHistoryBuffer(1);
  return { ...board, forEachOdds: (visit) => board.forEachOdds((row) => visit(row, empty)) };
}

/** `count` batches of `size` price changes on random live rows; most prices differ from the current one (ring appends). */
export function buildPriceBatches(engine: OddsEngine, count: number, size: number, seed = 1): Change[][] {
  let state = seed >>> 0;
  const rand = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const s = engine.store;
  const batches: Change[][] = [];
  for (let b = 0; b < count; b++) {
    const batch: Change[] = [];
    while (batch.length < size) {
      const slot = Math.floor(rand() * s.size);
      if (!engine.isLive(slot)) continue;
      if (s.priceAmerican[slot] === 0) {
        batch.push({ op: 'price', slot, priceAmerican: null, dfsMultiplier: 0.9 + Math.floor(rand() * 5) / 20, suspended: false });
      } else {
        const magnitude = 100 + Math.floor(rand() * 60);
        batch.push({ op: 'price', slot, priceAmerican: rand() < 0.5 ? -magnitude : magnitude, suspended: rand() < 0.02 });
      }
    }
    batches.push(batch);
  }
  return batches;
}

/**
 * Updates per second applying the batches round-robin (tinybench, ~time ms), advancing
 * the clock 1 ms per batch: from the median batch time (robust to a busy machine) and
 * from the mean. Signals can call this with and without their listener subscribed.
 */
export async function measureApply(engine: OddsEngine, clock: ManualClock, batches: Change[][], time = 2000): Promise<{ median: number; mean: number }> {
  let next = 0;
  const bench = new Bench({ time, warmupTime: 200 });
  bench.add('apply', () => {
    clock.advance(1);
    engine.apply(batches[next++ % batches.length]);
  });
  await bench.run();
  const result = bench.tasks[0].result;
  if (result.state !== 'completed') throw new Error(`apply bench ${result.state}`);
  return { median: (batches[0].length * 1000) / result.latency.p50, mean: (batches[0].length * 1000) / result.latency.mean };
}

/** Child process: loads the board and prints its memory per row as JSON. */
async function memoryChild(size: BoardSize, history: boolean): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const board = generateBoard({ seed: 42, size, now: NOW });
  gc();
  gc();
  const before = process.memoryUsage();
  const engine = new OddsEngine(new ManualClock(NOW), { initialCapacity: 16 });
  const load = loadBoard(engine, history ? board : withoutHistory(board));
  gc();
  gc();
  const after = process.memoryUsage();
  const rows = engine.liveRows;
  const parts = engine.memory();
  const out: Record<string, number> = {
    rows,
    loadMs: Math.round(load.ms),
    bytesPerRow: Math.round((after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / rows),
    heapBytesPerRow: Math.round((after.heapUsed - before.heapUsed) / rows),
    typedArrayBytesPerRow: Math.round((after.arrayBuffers - before.arrayBuffers) / rows),
    rssMb: Math.round(after.rss / 1048576),
  };
  for (const [part, bytes] of Object.entries(parts)) out[`${part}BytesPerRow`] = Math.round(bytes / rows);
  process.stdout.write(JSON.stringify(out));
}

function measureMemory(size: BoardSize, history: boolean): Record<string, number> {
  const self = fileURLToPath(import.meta.url);
  const output = execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=4096', '--import', 'tsx', self, MEMORY_FLAG, size, history ? '1' : '0'], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(output) as Record<string, number>;
}

export async function benchEngine(): Promise<Record<string, number | string>> {
  const size = benchSize();
  const out: Record<string, number | string> = {};
  const bare = measureMemory(size, false);
  const full = measureMemory(size, true);
  out[`${size}: odds rows`] = bare.rows;
  out['load ms (with history)'] = full.loadMs;
  out['bytes/row without history (heap + typed arrays)'] = bare.bytesPerRow;
  out['  of which heap / typed arrays'] = `${bare.heapBytesPerRow} / ${bare.typedArrayBytesPerRow}`;
  out['  columns / indexes / id table bytes/row'] = `${bare.columnsBytesPerRow} / ${bare.indexesBytesPerRow} / ${bare.keysBytesPerRow}`;
  out['bytes/row with history (heap + typed arrays)'] = full.bytesPerRow;
  out['  history ring slabs bytes/row'] = full.ringsBytesPerRow;
  out['RSS MB, board loaded without history'] = bare.rssMb;
  out['RSS MB, board loaded with full history'] = full.rssMb;

  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, generateBoard({ seed: 42, size, now: NOW }));
  const batches = buildPriceBatches(engine, 50, 20_000);
  const rate = await measureApply(engine, clock, batches);
  out['apply updates/s (price changes, batches of 20k, median batch)'] = Math.round(rate.median);
  out['apply updates/s (mean batch)'] = Math.round(rate.mean);
  // List versions fold content changes in lazily: the next query pays this per change.
  let syncMs = 0;
  for (const batch of buildPriceBatches(engine, 10, 20_000, 7)) {
    clock.advance(1);
    engine.apply(batch);
    const started = performance.now();
    engine.syncVersions();
    syncMs += performance.now() - started;
  }
  out['version catch-up ns per change (paid by the next query)'] = Math.round((syncMs * 1e6) / 200_000);

  const nba = filterOf({ leagues: ['nba'] });
  const cursors: string[] = [];
  for (let page = engine.odds.page(nba, null, 1000); page.hasMore && cursors.length < 200; page = engine.odds.page(nba, page.lastId, 1000)) {
    cursors.push(page.lastId!);
  }
  const mainFilter = filterOf({ leagues: ['nba'], isMain: true });
  const warmSlots = engine.odds.page(nba, cursors[0], 100);
  const fixedSlots = Int32Array.from(warmSlots.slots.subarray(0, warmSlots.count));
  const fixedPage = { ...warmSlots, slots: fixedSlots };
  engine.odds.render(fixedPage, 'all');
  const strings = Array.from(fixedSlots, (slot) => rowJsonText(engine.store, slot, 0));
  const reused = Buffer.allocUnsafeSlow(1 << 20);
  let c = 0;
  const bench = new Bench({ time: 1000, warmupTime: 100 });
  bench
    .add('page 100 rows (league slice)', () => {
      engine.odds.page(nba, cursors[c++ % cursors.length], 100);
    })
    .add('page 100 rows is_main (league slice)', () => {
      engine.odds.page(mainFilter, cursors[c++ % cursors.length], 100);
    })
    .add('page + render 100 rows (warm fragments)', () => {
      engine.odds.render(engine.odds.page(nba, cursors[c++ % cursors.length], 100), 'all');
    })
    .add('join 100 fragments: Buffer arena copy', () => {
      engine.odds.render(fixedPage, 'all');
    })
    .add('join 100 fragments: renderInto a reused buffer', () => {
      engine.odds.renderLength(fixedPage, 'all');
      engine.odds.renderInto(fixedPage, 'all', reused, 0);
    })
    .add('join 100 fragments: string join + Buffer.from', () => {
      Buffer.from(strings.join(','), 'utf8');
    });
  await bench.run();
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') {
      out[task.name] = result.state;
      continue;
    }
    out[`${task.name} ops/s`] = Math.round(1000 / result.latency.mean);
    out[`${task.name} mean µs`] = Math.round(result.latency.mean * 1000 * 10) / 10;
  }
  out['targets'] = '>= 2M updates/s; <= 400 B/row without history; < 2048 MB RSS with history';
  return out;
}

if (process.argv[2] === MEMORY_FLAG) {
  await memoryChild(process.argv[3] as BoardSize, process.argv[4] === '1');
}
