// The tick archive (docs/archive.md):
// - its cost while ingesting at 1,000 and 10,000 price updates/s (paced batches through
//   the write path of a durable board, ARCHIVE_INTERVAL_MS 1 s): process CPU per second
//   with and without the archive (DuckDB's threads included), archive bytes per tick,
//   ack p99 and the event loop's p99 delay with and without it;
// - queries over a generated multi-day archive, one plain file per day in log order (as
//   flushes write them, before any merge): one selection's whole history (p50/p95 and CPU
//   per query over ARCHIVE_BENCH_QUERIES selections, default 20, within a minute) over
//   those files; then the archive's own maintenance merges every day into the merged
//   layout (timed), and the same queries again, one day's export (whole, and one league),
//   and the replay window's archive query 24 h back. Progress goes to stderr.
// Sizes: ARCHIVE_BENCH_SECONDS (default 4; 0 skips the ingest part) per rate,
// ARCHIVE_BENCH_DAYS (default 3) and ARCHIVE_BENCH_ROWS_PER_DAY (default 2,000,000;
// 17,280,000 is 200 updates/s) for the generated archive, BOARD (default small).
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
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
import { archiveFileName, listArchiveFiles } from '../persistence/archive/archiveFiles.ts';
import { ARCHIVE_COLUMNS } from '../persistence/archive/archiveSchema.ts';
import { TickArchive } from '../persistence/archive/tickArchive.ts';
import { openPersistence } from '../persistence/persistence.ts';

type Measurements = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.ARCHIVE_BENCH_SECONDS ?? 4);
const DAYS = Number(process.env.ARCHIVE_BENCH_DAYS ?? 3);
const ROWS_PER_DAY = Number(process.env.ARCHIVE_BENCH_ROWS_PER_DAY ?? 2_000_000);
const QUERIES = Number(process.env.ARCHIVE_BENCH_QUERIES ?? 20);

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
 * A generated archive of DAYS days, ROWS_PER_DAY changes each over 100,000 selections of
 * 2,000 events: one file per day in log order, in 122,880-row groups, as a flush writes
 * them (and as a day an older version never merged stays): the archive reads them as
 * plain files, then its maintenance merges each day as it does after midnight. Event ids
 * are shaped like the board's (`nfl-20261121-0042-AW-HM`): their first 8 bytes are the
 * league and year, as in real data. One change in 10,007 is a removal (the replay
 * window's query finds them).
 */
async function generateArchive(dir: string): Promise<{ ids: string[]; seconds: number }> {
  const started = performance.now();
  const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '2GB' });
  const c = await db.connect();
  await c.run(`SET temp_directory = '${join(dir, '.generate-spill')}'`);
  const selections = 100_000;
  let seq = 1;
  const past = new Date(NOW - 86_400_000);
  for (let d = 0; d < DAYS; d++) {
    const day = new Date(NOW - (DAYS - 1 - d) * 86_400_000).toISOString().slice(0, 10);
    const dayStart = Date.parse(`${day}T00:00:00Z`);
    const dayDir = join(dir, day);
    mkdirSync(dayDir, { recursive: true });
    const first = seq;
    const last = seq + ROWS_PER_DAY - 1;
    const columns = ARCHIVE_COLUMNS.map((column) => column.name);
    const eventId = `(['nfl', 'nba', 'nhl', 'ncaab'][1 + (h % 2000) % 4] || '-20261121-' || lpad(CAST(h % 2000 AS VARCHAR), 4, '0') || '-AW-HM')`;
    const values: Record<string, string> = {
      seq: `CAST(${first} + i AS BIGINT)`,
      pos: '0',
      time_ms: `CAST(${dayStart} + (i * 86400000) // ${ROWS_PER_DAY} AS BIGINT)`,
      kind: "CASE WHEN i % 10007 = 0 THEN 'remove' ELSE 'price' END",
      odds_id: `${eventId} || ':book' || (h % 20) || ':TOTAL:FULL-OVER-' || h`,
      event_id: eventId,
      league: "['nfl', 'nba', 'nhl', 'ncaab'][1 + (h % 2000) % 4]",
      book: `'book' || (h % 20)`,
      market: "'TOTAL'",
      market_subtype: "'TOTAL'",
      selection_id: `'FULL-OVER-' || h`,
      selection: "'Over'",
      line: '44.5',
      price_american: 'CAST(-110 - (i % 40) AS INTEGER)',
      dfs_multiplier: 'CAST(NULL AS DOUBLE)',
      suspended: 'CAST(NULL AS BOOLEAN)',
      event_status: 'CAST(NULL AS VARCHAR)',
      event_start_ms: `CAST(${NOW + 86_400_000} AS BIGINT)`,
      removed_rows: "CASE WHEN i % 10007 = 0 THEN '[]' END",
    };
    const select = columns.map((name) => `${values[name]} AS ${name}`).join(', ');
    const path = join(dayDir, archiveFileName(first, last));
    await c.run(`COPY (SELECT ${select} FROM (SELECT i, CAST(hash(i) % ${selections} AS BIGINT) AS h FROM range(${ROWS_PER_DAY}) t(i))) TO '${path}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
    progress(`generated ${day} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    // written days ago, as far as the archive can tell (a file it rewrites in place must be older than a few seconds)
    utimesSync(path, past, past);
    seq = last + 1;
  }
  const ids = (await c.runAndReadAll(`SELECT DISTINCT odds_id FROM read_parquet('${join(dir, '*', '*.parquet')}') USING SAMPLE ${QUERIES} ROWS`)).getRowObjects().map((row) => row.odds_id as string);
  c.closeSync();
  db.closeSync();
  rmSync(join(dir, '.generate-spill'), { recursive: true, force: true });
  return { ids, seconds: (performance.now() - started) / 1000 };
}

/** One selection's whole history for each id (stopping after `budgetMs`): p50 / p95 ms, the samples and the mean rows. */
async function historyTimes(archive: TickArchive, ids: readonly string[], budgetMs: number): Promise<{ p50: number; p95: number; samples: number; rows: number; cpuMs: number }> {
  const times: number[] = [];
  let rows = 0;
  const began = performance.now();
  // the process's CPU (DuckDB's threads included): on a shared machine, what a query costs
  const cpu0 = process.cpuUsage();
  for (const id of ids) {
    const started = performance.now();
    rows += (await archive.rowsOfIds([id], Number.MAX_SAFE_INTEGER)).rows.length;
    times.push(performance.now() - started);
    if (performance.now() - began > budgetMs) break;
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95), samples: times.length, rows: rows / times.length, cpuMs: (cpu.user + cpu.system) / 1000 / times.length };
}

export async function benchArchive(): Promise<Measurements> {
  const size = (process.env.BOARD as BoardSize | undefined) ?? 'small';
  const out: Measurements = { note: `loaded shared machine; board ${size}; ${SECONDS}s per rate; ${DAYS} days x ${ROWS_PER_DAY.toLocaleString('en-US')} rows generated` };
  for (const rate of SECONDS > 0 ? [1000, 10_000] : []) {
    const without = await paced(size, rate, false);
    const withArchive = await paced(size, rate, true);
    out[`${rate}/s: CPU ms per second without / with archive`] = `${without.cpuMsPerSecond.toFixed(0)} / ${withArchive.cpuMsPerSecond.toFixed(0)}`;
    out[`${rate}/s: archive CPU ms per second (difference)`] = Math.round(withArchive.cpuMsPerSecond - without.cpuMsPerSecond);
    out[`${rate}/s: archive bytes per tick`] = withArchive.archiveBytes / withArchive.ticks;
    out[`${rate}/s: ack p99 ms without / with archive`] = `${without.ackP99Ms.toFixed(1)} / ${withArchive.ackP99Ms.toFixed(1)}`;
    out[`${rate}/s: event loop p99 ms without / with archive`] = `${without.loopP99Ms.toFixed(1)} / ${withArchive.loopP99Ms.toFixed(1)}`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-archive-days-'));
  try {
    const generated = await generateArchive(dir);
    out['generated archive: rows'] = DAYS * ROWS_PER_DAY;
    out['generated archive (plain day files): MiB'] = listArchiveFiles(dir).reduce((sum, file) => sum + file.bytes, 0) / 1048576;
    out['generated archive: seconds to write'] = generated.seconds;
    const lastSeq = DAYS * ROWS_PER_DAY;
    const lastDay = new Date(NOW).toISOString().slice(0, 10);
    const archive = await TickArchive.open({
      dir,
      retentionDays: 3650,
      intervalMs: 0,
      // the day after the last generated one: every generated day is finished
      now: () => NOW + 86_400_000,
      warn: (line) => console.error(line),
      source: { rowsOf: () => {} },
      // every generated day rewritten at once (the service spaces an upgrade's rewrites out)
      compaction: { rewriteEveryMs: 0 },
      // a log that holds nothing after the generated archive
      log: { lastIndex: lastSeq, firstIndex: () => lastSeq + 1, replay: () => {}, archived: () => {} },
    });
    try {
      // before: the files as an older version left them (read whole, by column name)
      progress(`generated in ${generated.seconds.toFixed(0)} s`);
      const before = await historyTimes(archive, generated.ids, 60_000);
      out[`plain day files (log order): one selection's ${DAYS}-day history p50 / p95 ms (${before.samples} selections)`] = `${before.p50.toFixed(1)} / ${before.p95.toFixed(1)}`;
      out['plain day files: CPU ms per history query'] = before.cpuMs;
      progress(`plain files: p50 ${before.p50.toFixed(0)} ms p95 ${before.p95.toFixed(0)} ms over ${before.samples}, CPU ${before.cpuMs.toFixed(0)} ms each`);
      // compaction: each flush's maintenance rewrites one finished day in the merged layout
      const compactStarted = performance.now();
      for (let d = 0; d < DAYS; d++) {
        await archive.flush();
        progress(`merged ${d + 1} of ${DAYS} days (${((performance.now() - compactStarted) / 1000).toFixed(0)} s)`);
      }
      const compactSeconds = (performance.now() - compactStarted) / 1000;
      out['merged layout: seconds to rewrite all days (DuckDB threads 2, memory 512MB)'] = compactSeconds;
      out['merged layout: seconds per day'] = compactSeconds / DAYS;
      out['merged layout: MiB'] = listArchiveFiles(dir).reduce((sum, file) => sum + file.bytes, 0) / 1048576;
      const cold = await historyTimes(archive, generated.ids.slice(0, 1), Infinity);
      out["merged layout: first query (footers not cached yet) ms"] = cold.p50;
      const after = await historyTimes(archive, generated.ids, Infinity);
      out[`merged layout: one selection's ${DAYS}-day history p50 / p95 ms (${after.samples} selections)`] = `${after.p50.toFixed(1)} / ${after.p95.toFixed(1)}`;
      progress(`merged layout: first query ${cold.p50.toFixed(0)} ms, then p50 ${after.p50.toFixed(1)} ms p95 ${after.p95.toFixed(1)} ms over ${after.samples}, ${after.rows} rows each, CPU ${after.cpuMs.toFixed(1)} ms each`);
      out["one selection's history: mean rows"] = after.rows;
      out['merged layout: CPU ms per history query'] = after.cpuMs;
      const exportDir = mkdtempSync(join(tmpdir(), 'bench-archive-export-'));
      try {
        let started = performance.now();
        const whole = await archive.exportDay(lastDay, null, join(exportDir, 'day.parquet'));
        out[`one day's export (${whole.rows.toLocaleString('en-US')} rows): seconds`] = (performance.now() - started) / 1000;
        progress(`export of a day: ${((performance.now() - started) / 1000).toFixed(2)} s`);
        started = performance.now();
        const league = await archive.exportDay(lastDay, 'nfl', join(exportDir, 'nfl.parquet'));
        out[`one day's export of one league (${league.rows.toLocaleString('en-US')} rows): seconds`] = (performance.now() - started) / 1000;
        progress(`export of a league: ${((performance.now() - started) / 1000).toFixed(2)} s, ${league.rows} rows`);
      } finally {
        rmSync(exportDir, { recursive: true, force: true });
      }
      // 24 h before the last generated change
      const since = Date.parse(`${lastDay}T00:00:00Z`);
      const started = performance.now();
      const removals = await archive.removalsSince(since);
      out[`the replay window's archive query, 24 h back (${removals.rows.length} removals): ms`] = performance.now() - started;
    } finally {
      await archive.abandon();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
