// The tick archive (docs/archive.md):
// - its cost while ingesting at 1,000 and 10,000 price updates/s (paced batches through
//   the write path of a durable board, ARCHIVE_INTERVAL_MS 1 s): process CPU per second
//   with and without the archive (DuckDB's threads included), archive bytes per tick,
//   ack p99 and the event loop's p99 delay with and without it;
// - queries over a generated multi-day archive (bench/archiveGenerator.ts): one
//   selection's whole history (p50/p95 and CPU per query over ARCHIVE_BENCH_QUERIES
//   selections, default 20), one day's export (whole, and one league), the replay
//   window's archive query 24 h back, and a day's merge by the archive's maintenance with
//   the history asked while it runs. ARCHIVE_BENCH_LAYOUT=plain (default): one file per
//   day in log order (as flushes write them, before any merge), asked as they are (within
//   a minute), then merged by the archive day by day (the last one while queries run);
//   ARCHIVE_BENCH_LAYOUT=merged: the days written straight in the merged layout (how the
//   full-size archive is made in reasonable time), then one more plain day merged while
//   queries run (ARCHIVE_BENCH_MERGE_DAY=0: not). ARCHIVE_BENCH_SPLIT: the parts a merged
//   day is split into (16, 64 or 256; default the archive's SPLIT_PARTS), or 0: one file
//   a day, as the previous version merged days (then ARCHIVE_BENCH_MERGE_DAY=0: the
//   archive would rewrite those days first). Progress goes to stderr.
// Sizes: ARCHIVE_BENCH_SECONDS (default 4; 0 skips the ingest part) per rate,
// ARCHIVE_BENCH_DAYS (default 3; 0 skips the archive part), ARCHIVE_BENCH_ROWS_PER_DAY
// (default 2,000,000; 17,280,000 is 200 updates/s) and ARCHIVE_BENCH_EVENTS (default
// 2,000, of 50 selections each) for the generated archive, BOARD (default small).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { NO_PRICE } from '../engine/oddsStore.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { attachTickArchive } from '../ingest/archiveRows.ts';
import { DurableBoard } from '../ingest/durableBoard.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import { listArchiveFiles, listDays } from '../persistence/archive/archiveFiles.ts';
import { MERGED_ROW_GROUP_ROWS, SPLIT_PARTS, TickArchive } from '../persistence/archive/tickArchive.ts';
import { openPersistence } from '../persistence/persistence.ts';
import { ArchiveGenerator, SINGLE_FILE_LAYOUT, splitLayout } from './archiveGenerator.ts';

type Measurements = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.ARCHIVE_BENCH_SECONDS ?? 4);
const DAYS = Number(process.env.ARCHIVE_BENCH_DAYS ?? 3);
const ROWS_PER_DAY = Number(process.env.ARCHIVE_BENCH_ROWS_PER_DAY ?? 2_000_000);
const QUERIES = Number(process.env.ARCHIVE_BENCH_QUERIES ?? 20);
const EVENTS = Number(process.env.ARCHIVE_BENCH_EVENTS ?? 2000);
/** plain: day files in log order, merged by the archive (timed); merged: written in the merged layout (the full-size archive). */
const LAYOUT = process.env.ARCHIVE_BENCH_LAYOUT === 'merged' ? 'merged' : 'plain';
/** merged layout: one more day as a plain file, merged by the archive while queries run (0: none). */
const MERGE_DAY = process.env.ARCHIVE_BENCH_MERGE_DAY !== '0';
/** Parts of a merged day (0: one file, the previous version's layout). */
const SPLIT = Number(process.env.ARCHIVE_BENCH_SPLIT ?? SPLIT_PARTS);
if (![0, 16, 64, 256].includes(SPLIT)) throw new Error(`ARCHIVE_BENCH_SPLIT must be 0, 16, 64 or 256, not ${process.env.ARCHIVE_BENCH_SPLIT}`);
const MERGED_DAY_LAYOUT = SPLIT === 0 ? SINGLE_FILE_LAYOUT : splitLayout(SPLIT);

/** A line on stderr as the bench goes (the results print at the end; a run stopped early still says how far it got). */
function progress(line: string): void {
  process.stderr.write(`archive bench: ${line}\n`);
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

interface RunResult {
  cpuMsPerSecond: number;
  ackP99Ms: number;
  loopP99Ms: number;
  archiveBytes: number;
  ticks: number;
}

/** Ingests `rate` updates/s for SECONDS in batches every 100 ms, with or without the archive. */
async function paced(size: BoardSize, rate: number, withArchive: boolean): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-archive-'));
  const clock = new ManualClock(NOW);
  const persistence = openPersistence({ path: join(dir, 'odds.db'), env: {} });
  const durable = DurableBoard.open({ dataDir: dir, clock, cold: persistence, checkpointIntervalMs: 0, env: {}, warn: () => {} });
  const board = generateBoard({ size, seed: 42, now: NOW });
  loadBoard(durable.engine, board);
  await durable.checkpointNow();
  const archive = withArchive ? await attachTickArchive(durable, { dir: join(dir, 'archive'), retentionDays: 30, intervalMs: 1000 }, { now: () => clock.now(), warn: () => {}, fsync: true }) : null;
  const s = durable.engine.store;
  const ids: string[] = [];
  for (let slot = 0; slot < s.size && ids.length < 2000; slot++) if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && s.dfsMultiplier[slot] !== s.dfsMultiplier[slot]) ids.push(durable.engine.idOf(slot));
  const perBatch = Math.max(1, Math.round(rate / 10));
  const acks: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let n = 0;
  let ticks = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  loop.enable();
  const pending: Promise<void>[] = [];
  for (let batch = 0; batch < SECONDS * 10; batch++) {
    const due = t0 + batch * 100;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    clock.advance(100);
    const changes = [];
    for (let i = 0; i < perBatch; i++) {
      const id = ids[(n + i) % ids.length];
      changes.push({ op: 'price', id, priceAmerican: ((n + i) % 2 === 0 ? -1 : 1) * (105 + ((n + i) % 50)) });
    }
    n += perBatch;
    ticks += perBatch;
    const sent = performance.now();
    pending.push(durable.ingest.submit(changes).then(() => void acks.push(performance.now() - sent)));
  }
  await Promise.all(pending);
  if (archive !== null) await archive.flush();
  loop.disable();
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const archiveBytes = archive === null ? 0 : listArchiveFiles(join(dir, 'archive')).reduce((sum, file) => sum + file.bytes, 0);
  await archive?.close();
  await durable.close();
  persistence.close();
  rmSync(dir, { recursive: true, force: true });
  acks.sort((a, b) => a - b);
  return { cpuMsPerSecond: (cpu.user + cpu.system) / 1000 / elapsed, ackP99Ms: quantile(acks, 0.99), loopP99Ms: loop.percentile(99) / 1e6, archiveBytes, ticks };
}

/**
 * A generated archive of DAYS days, ROWS_PER_DAY changes each over EVENTS events of 50
 * selections (bench/archiveGenerator.ts). LAYOUT plain: one file per day in log order,
 * as a flush writes them (and as a day an older version never merged stays): the archive
 * reads them as plain files, then its maintenance merges each day as it does after
 * midnight. LAYOUT merged: each day written straight in the archive's merged layout (the
 * full-size archive in minutes, not the hours its merges would take), then one more day
 * as a plain file, which the archive merges while history queries run.
 */
async function generateArchive(dir: string): Promise<{ ids: string[]; seconds: number; plainDay: string | null }> {
  const started = performance.now();
  const spill = join(dir, '.generate-spill');
  const generator = await ArchiveGenerator.open({ events: EVENTS, selectionsPerEvent: 50, rowsPerDay: ROWS_PER_DAY }, spill, NOW + 86_400_000);
  try {
    let plainDay: string | null = null;
    const total = LAYOUT === 'merged' && MERGE_DAY ? DAYS + 1 : DAYS;
    for (let d = 0; d < total; d++) {
      const day = new Date(NOW - (DAYS - 1 - d) * 86_400_000).toISOString().slice(0, 10);
      const merged = LAYOUT === 'merged' && d < DAYS;
      const written = await generator.day(dir, day, 1 + d * ROWS_PER_DAY, merged ? MERGED_DAY_LAYOUT : null);
      if (merged && d === 0) for (const path of written.parquet.slice(0, 4)) await generator.checkMerged(path, MERGED_ROW_GROUP_ROWS, 'event_key');
      if (!merged && LAYOUT === 'merged') plainDay = day;
      progress(`generated ${day} (${merged ? `merged layout, ${written.parquet.length} file(s)` : 'plain'}, ${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    const ids = await generator.sampleIds(QUERIES);
    return { ids, seconds: (performance.now() - started) / 1000, plainDay };
  } finally {
    generator.close(spill);
  }
}

/**
 * One selection's whole history up to `toMs` for each id (stopping after `budgetMs`, or,
 * with `until`, going round the ids until it settles): p50 / p95 ms, the samples, the mean
 * rows and the CPU per query.
 */
async function historyTimes(archive: TickArchive, ids: readonly string[], budgetMs: number, toMs = Number.MAX_SAFE_INTEGER, until?: Promise<unknown>): Promise<{ p50: number; p95: number; samples: number; rows: number; cpuMs: number }> {
  const times: number[] = [];
  let rows = 0;
  let settled = false;
  void until?.finally(() => (settled = true));
  const began = performance.now();
  // the process's CPU (DuckDB's threads included): on a shared machine, what a query costs
  const cpu0 = process.cpuUsage();
  for (let n = 0; ; n++) {
    if (until === undefined ? n >= ids.length : settled && n > 0) break;
    const started = performance.now();
    rows += (await archive.rowsOfIds([ids[n % ids.length]], toMs)).rows.length;
    times.push(performance.now() - started);
    if (performance.now() - began > budgetMs) break;
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95), samples: times.length, rows: rows / times.length, cpuMs: (cpu.user + cpu.system) / 1000 / times.length };
}

export async function benchArchive(): Promise<Measurements> {
  const size = (process.env.BOARD as BoardSize | undefined) ?? 'small';
  const out: Measurements = { note: `loaded shared machine; board ${size}; ${SECONDS}s per rate; ${DAYS} days x ${ROWS_PER_DAY.toLocaleString('en-US')} rows generated (${LAYOUT} layout, ${SPLIT === 0 ? 'a merged day in one file' : `a merged day split in ${SPLIT} parts`}, ${EVENTS} events x 50 selections)` };
  for (const rate of SECONDS > 0 ? [1000, 10_000] : []) {
    const without = await paced(size, rate, false);
    const withArchive = await paced(size, rate, true);
    out[`${rate}/s: CPU ms per second without / with archive`] = `${without.cpuMsPerSecond.toFixed(0)} / ${withArchive.cpuMsPerSecond.toFixed(0)}`;
    out[`${rate}/s: archive CPU ms per second (difference)`] = Math.round(withArchive.cpuMsPerSecond - without.cpuMsPerSecond);
    out[`${rate}/s: archive bytes per tick`] = withArchive.archiveBytes / withArchive.ticks;
    out[`${rate}/s: ack p99 ms without / with archive`] = `${without.ackP99Ms.toFixed(1)} / ${withArchive.ackP99Ms.toFixed(1)}`;
    out[`${rate}/s: event loop p99 ms without / with archive`] = `${without.loopP99Ms.toFixed(1)} / ${withArchive.loopP99Ms.toFixed(1)}`;
  }
  if (DAYS === 0) return out;
  const dir = mkdtempSync(join(tmpdir(), 'bench-archive-days-'));
  try {
    const generated = await generateArchive(dir);
    out['generated archive: rows'] = DAYS * ROWS_PER_DAY;
    out[`generated archive (${LAYOUT} day files): MiB`] = listArchiveFiles(dir).reduce((sum, file) => sum + file.bytes, 0) / 1048576;
    out['generated archive: seconds to write'] = generated.seconds;
    progress(`generated in ${generated.seconds.toFixed(0)} s`);
    const days = listDays(dir);
    const lastSeq = days.length * ROWS_PER_DAY;
    const lastDay = new Date(NOW).toISOString().slice(0, 10);
    const endOf = (day: string): number => Date.parse(`${day}T00:00:00Z`) + 86_400_000 - 1;
    const archive = await TickArchive.open({
      dir,
      retentionDays: 3650,
      intervalMs: 0,
      // the day after the last generated one: every generated day is finished
      now: () => endOf(days[days.length - 1]) + 1,
      warn: (line) => console.error(line),
      source: { rowsOf: () => {} },
      // every generated day rewritten at once (the service spaces an upgrade's rewrites out), split as the generated ones
      compaction: { rewriteEveryMs: 0, splitParts: SPLIT === 0 ? SPLIT_PARTS : (SPLIT as 16 | 64 | 256) },
      // a log that holds nothing after the generated archive
      log: { lastIndex: lastSeq, firstIndex: () => lastSeq + 1, replay: () => {}, archived: () => {} },
    });
    try {
      let duringMerge: Awaited<ReturnType<typeof historyTimes>> | null = null;
      let mergeSeconds = 0;
      if (LAYOUT === 'plain') {
        // before: the files as an older version left them (read whole, by column name)
        const before = await historyTimes(archive, generated.ids, 60_000);
        out[`plain day files (log order): one selection's ${DAYS}-day history p50 / p95 ms (${before.samples} selections)`] = `${before.p50.toFixed(1)} / ${before.p95.toFixed(1)}`;
        out['plain day files: CPU ms per history query'] = before.cpuMs;
        progress(`plain files: p50 ${before.p50.toFixed(0)} ms p95 ${before.p95.toFixed(0)} ms over ${before.samples}, CPU ${before.cpuMs.toFixed(0)} ms each`);
        // compaction: each flush's maintenance rewrites one finished day in the merged layout, oldest first;
        // while the last day merges, the days before it (merged) are asked
        const compactStarted = performance.now();
        for (let d = 0; d < DAYS; d++) {
          const merging = archive.flush();
          if (d === DAYS - 1 && DAYS > 1) duringMerge = await historyTimes(archive, generated.ids, Infinity, endOf(days[DAYS - 2]), merging);
          await merging;
          progress(`merged ${d + 1} of ${DAYS} days (${((performance.now() - compactStarted) / 1000).toFixed(0)} s)`);
        }
        mergeSeconds = (performance.now() - compactStarted) / 1000 / DAYS;
        out['merged layout: MiB'] = listArchiveFiles(dir).reduce((sum, file) => sum + file.bytes, 0) / 1048576;
      }
      const toMs = endOf(lastDay);
      const cold = await historyTimes(archive, generated.ids.slice(0, 1), Infinity, toMs);
      out['merged layout: first query (footers not cached yet) ms'] = cold.p50;
      const after = await historyTimes(archive, generated.ids, Infinity, toMs);
      out[`merged layout: one selection's ${DAYS}-day history p50 / p95 ms (${after.samples} selections)`] = `${after.p50.toFixed(1)} / ${after.p95.toFixed(1)}`;
      progress(`merged layout: first query ${cold.p50.toFixed(0)} ms, then p50 ${after.p50.toFixed(1)} ms p95 ${after.p95.toFixed(1)} ms over ${after.samples}, ${after.rows} rows each, CPU ${after.cpuMs.toFixed(1)} ms each`);
      out["one selection's history: mean rows"] = after.rows;
      out['merged layout: CPU ms per history query'] = after.cpuMs;
      if (generated.plainDay !== null) {
        // the day after: merged by the archive while the merged days are asked
        const started = performance.now();
        const merging = archive.flush();
        duringMerge = await historyTimes(archive, generated.ids, Infinity, toMs, merging);
        await merging;
        mergeSeconds = (performance.now() - started) / 1000;
      }
      if (mergeSeconds > 0) out["a day's merge by the archive's maintenance (DuckDB 1 thread, 384 MB): seconds"] = mergeSeconds;
      if (duringMerge !== null) {
        out[`merged layout while a day merges: history p50 / p95 ms (${duringMerge.samples} queries)`] = `${duringMerge.p50.toFixed(1)} / ${duringMerge.p95.toFixed(1)}`;
        out["merged layout while a day merges: CPU ms per history query (the merge's included)"] = duringMerge.cpuMs;
        progress(`while a day merged: p50 ${duringMerge.p50.toFixed(1)} ms p95 ${duringMerge.p95.toFixed(1)} ms over ${duringMerge.samples}`);
      }
      const exportDir = mkdtempSync(join(tmpdir(), 'bench-archive-export-'));
      try {
        // wall and the process's CPU (DuckDB's threads included): on a shared machine the wall moves with the load
        let started = performance.now();
        let cpu0 = process.cpuUsage();
        const cpuSeconds = (): number => {
          const cpu = process.cpuUsage(cpu0);
          return (cpu.user + cpu.system) / 1e6;
        };
        const whole = await archive.exportDay(lastDay, null, join(exportDir, 'day.parquet'));
        out[`one day's export (${whole.rows.toLocaleString('en-US')} rows): seconds wall / CPU`] = `${((performance.now() - started) / 1000).toFixed(1)} / ${cpuSeconds().toFixed(1)}`;
        progress(`export of a day: ${((performance.now() - started) / 1000).toFixed(2)} s, CPU ${cpuSeconds().toFixed(1)} s`);
        started = performance.now();
        cpu0 = process.cpuUsage();
        const league = await archive.exportDay(lastDay, 'nfl', join(exportDir, 'nfl.parquet'));
        out[`one day's export of one league (${league.rows.toLocaleString('en-US')} rows): seconds wall / CPU`] = `${((performance.now() - started) / 1000).toFixed(1)} / ${cpuSeconds().toFixed(1)}`;
        progress(`export of a league: ${((performance.now() - started) / 1000).toFixed(2)} s, CPU ${cpuSeconds().toFixed(1)} s, ${league.rows} rows`);
      } finally {
        rmSync(exportDir, { recursive: true, force: true });
      }
      // 24 h before the last generated change
      const since = Date.parse(`${days[days.length - 1]}T00:00:00Z`);
      const started = performance.now();
      const cpu0 = process.cpuUsage();
      const removals = await archive.removalsSince(since);
      const cpu = process.cpuUsage(cpu0);
      out[`the replay window's archive query, 24 h back (${removals.rows.length} removals): ms wall / CPU`] = `${(performance.now() - started).toFixed(0)} / ${((cpu.user + cpu.system) / 1000).toFixed(0)}`;
    } finally {
      await archive.abandon();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
