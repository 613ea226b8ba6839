// Which merged layout answers one selection's history fastest: a comparison behind the
// archive's MERGED_KEYS and MERGED_ROW_GROUP_ROWS (persistence/archive/tickArchive.ts),
// run by hand, not part of `npm run bench`:
//
//   node --import tsx bench/archiveLayouts.ts
//
// For each layout (sort keys, row-group size) it generates LAYOUT_DAYS days (default 7) of
// LAYOUT_ROWS changes (default 2,000,000) over LAYOUT_EVENTS events of 50 selections
// (default 231: an event's and a selection's changes per day as at 17,280,000 changes
// over 2,000 events, so a query reads as many rows as at full size; only the footers are
// smaller), then asks LAYOUT_QUERIES selections' whole history (default 30) the way the
// archive does, on an instance set up as the archive's (2 threads, metadata cache), and
// prints CPU per query (DuckDB's threads included), wall p50/p95, bytes per row, row
// groups and footer bytes per day, and what DuckDB's profiler says one query read.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlString } from '../persistence/archive/archiveFiles.ts';
import { createHash } from 'node:crypto';
import { ARCHIVE_COLUMNS, EVENT_KEY_SQL, eventKey } from '../persistence/archive/archiveSchema.ts';
import { ArchiveGenerator, type GeneratedDay, type MergedLayout } from './archiveGenerator.ts';

const DAYS = Number(process.env.LAYOUT_DAYS ?? 7);
const ROWS = Number(process.env.LAYOUT_ROWS ?? 2_000_000);
const EVENTS = Number(process.env.LAYOUT_EVENTS ?? 231);
const QUERIES = Number(process.env.LAYOUT_QUERIES ?? 30);
/** LAYOUT_ONLY=0,3: only these variants (by their place in VARIANTS). */
const ONLY = process.env.LAYOUT_ONLY?.split(',').map(Number) ?? null;
const NOW = Date.parse('2026-11-21T12:00:00Z');
/** A second key tried (and measured no cheaper): md5 of the odds id, so a selection's query reads only its own row group. */
const ODDS_KEY_SQL = 'substr(md5(odds_id), 1, 8)';
const oddsKey = (id: string): string => createHash('md5').update(id, 'utf8').digest('hex').slice(0, 8);

interface Variant {
  name: string;
  rowGroupRows: number;
  oddsKey: boolean;
  /** Rewritten as the archive's merge did before (2 threads, insertion order kept): row groups cut where the sort's batches end. */
  batchCut?: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'event_key, 16384, merge as before', rowGroupRows: 16_384, oddsKey: false, batchCut: true },
  { name: 'event_key, 16384', rowGroupRows: 16_384, oddsKey: false },
  { name: 'event_key, 4096', rowGroupRows: 4096, oddsKey: false },
  { name: 'event_key+odds_key, 16384', rowGroupRows: 16_384, oddsKey: true },
  { name: 'event_key+odds_key, 8192', rowGroupRows: 8192, oddsKey: true },
  { name: 'event_key+odds_key, 4096', rowGroupRows: 4096, oddsKey: true },
  { name: 'event_key+odds_key, 2048', rowGroupRows: 2048, oddsKey: true },
];

function layoutOf(v: Variant): MergedLayout {
  const keys = [{ name: 'event_key', sql: EVENT_KEY_SQL }, ...(v.oddsKey ? [{ name: 'odds_key', sql: ODDS_KEY_SQL }] : [])];
  return { keys, order: '', copy: `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${v.rowGroupRows}` };
}

function footerBytes(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const size = statSync(path).size;
    const tail = Buffer.alloc(8);
    readSync(fd, tail, 0, 8, size - 8);
    return tail.readUInt32LE(0);
  } finally {
    closeSync(fd);
  }
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const READ_SELECT = ARCHIVE_COLUMNS.map((c) => (c.type === 'BIGINT' ? `CAST(${c.name} AS DOUBLE) AS ${c.name}` : c.name)).join(', ');

function historySql(files: readonly string[], id: string, v: Variant, columns = READ_SELECT): string {
  const event = id.slice(0, id.indexOf(':'));
  const byKey = `event_key = ${sqlString(eventKey(event))} AND ${v.oddsKey ? `odds_key = ${sqlString(oddsKey(id))} AND ` : ''}`;
  return `SELECT ${columns} FROM read_parquet([${files.map(sqlString).join(', ')}]) WHERE ${byKey}(odds_id = ${sqlString(id)} AND time_ms <= ${Number.MAX_SAFE_INTEGER}) ORDER BY seq, pos`;
}

async function measure(c: DuckDBConnection, label: string, ids: readonly string[], sqlOf: (id: string) => string[]): Promise<void> {
  // warm: footers into the metadata cache
  for (const sql of sqlOf(ids[0])) await c.runAndReadAll(sql);
  const times: number[] = [];
  let rows = 0;
  let convertMs = 0;
  const cpu0 = process.cpuUsage();
  for (const id of ids) {
    const started = performance.now();
    for (const sql of sqlOf(id)) {
      const reader = await c.runAndReadAll(sql);
      const converting = performance.now();
      rows += reader.getRowObjects().length;
      convertMs += performance.now() - converting;
    }
    times.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  const cpuMs = (cpu.user + cpu.system) / 1000 / ids.length;
  console.log(`  ${label}: CPU ${cpuMs.toFixed(1)} ms/query, wall p50 ${quantile(times, 0.5).toFixed(1)} p95 ${quantile(times, 0.95).toFixed(1)} ms, ${(rows / ids.length).toFixed(0)} rows, row conversion ${(convertMs / ids.length).toFixed(2)} ms`);
}

async function profileOne(c: DuckDBConnection, sql: string): Promise<void> {
  const plan = (await c.runAndReadAll(`EXPLAIN ANALYZE ${sql}`)).getRowObjects();
  const text = plan.map((row) => String(row.explain_value ?? Object.values(row).join(' '))).join('\n');
  // the scan's lines: rows scanned, filters, time
  const lines = text.split('\n').filter((line) => /READ_PARQUET|TABLE_SCAN|Total Time|rows|Rows|Filters|Scanning/i.test(line)).map((line) => line.replace(/[│┌┐└┘─]/g, '').trim()).filter((line) => line.length > 0);
  console.log(`  EXPLAIN ANALYZE: ${lines.join(' | ')}`);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'archive-layouts-'));
  const shape = { events: EVENTS, selectionsPerEvent: 50, rowsPerDay: ROWS };
  const generator = await ArchiveGenerator.open(shape, join(root, '.spill'), NOW + 86_400_000);
  console.log(`archive layouts: ${DAYS} days x ${ROWS.toLocaleString('en-US')} changes, ${EVENTS} events x 50 selections (${generator.ticksPerSelection} changes per selection per day); machine shared: CPU figures and ratios only`);
  const ids = await generator.sampleIds(QUERIES);
  try {
    for (const [index, v] of VARIANTS.entries()) {
      if (ONLY !== null && !ONLY.includes(index)) continue;
      const dir = join(root, v.name.replace(/[^a-z0-9]+/gi, '-'));
      const started = performance.now();
      const days: GeneratedDay[] = [];
      const layout = layoutOf(v);
      for (let d = 0; d < DAYS; d++) {
        const day = new Date(NOW - (DAYS - 1 - d) * 86_400_000).toISOString().slice(0, 10);
        days.push(await generator.day(dir, day, 1 + d * ROWS, layout));
      }
      const seconds = (performance.now() - started) / 1000;
      let files = days.map((day) => day.path);
      if (v.batchCut) {
        // the merge as the archive ran it before: 2 threads, insertion order kept
        const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '512MB' });
        const c = await db.connect();
        const order = 'event_key, odds_id, seq, pos';
        for (const file of files) await c.run(`COPY (SELECT * FROM read_parquet(${sqlString(file)}) ORDER BY ${order}) TO ${sqlString(`${file}.batch`)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${v.rowGroupRows})`);
        c.closeSync();
        db.closeSync();
        files = files.map((file) => `${file}.batch`);
      } else {
        await generator.checkMerged(files[0], v.rowGroupRows, 'event_key');
      }
      const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
      const probe = await DuckDBInstance.create(':memory:');
      const pc = await probe.connect();
      const groups = (await pc.runAndReadAll(`SELECT count(*) AS n, CAST(min(row_group_num_rows) AS DOUBLE) AS lo, CAST(max(row_group_num_rows) AS DOUBLE) AS hi FROM (SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${sqlString(files[0])}))`)).getRowObjects()[0];
      pc.closeSync();
      probe.closeSync();
      console.log(`${index}. ${v.name}: generated in ${seconds.toFixed(1)} s; ${(bytes / (DAYS * ROWS)).toFixed(2)} bytes/row; a day: ${groups.n} row groups of ${groups.lo}-${groups.hi} rows, footer ${(footerBytes(files[0]) / 1024).toFixed(0)} KiB`);
      // the archive's query instance
      const rss0 = process.memoryUsage().rss;
      const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '512MB' });
      const c = await db.connect();
      await c.run('SET parquet_metadata_cache = true');
      if (index === 0 || ONLY !== null) console.log(`  parquet_metadata_cache = ${(await c.runAndReadAll("SELECT current_setting('parquet_metadata_cache') AS v")).getRowObjects()[0].v}`);
      await measure(c, 'one query over the days (as the archive asks)', ids, (id) => [historySql(files, id, v)]);
      await measure(c, 'one query per day', ids.slice(0, 10), (id) => files.map((file) => historySql([file], id, v)));
      await measure(c, 'one query, only seq/pos/time/kind/prices', ids.slice(0, 10), (id) => [historySql(files, id, v, 'CAST(seq AS DOUBLE) AS seq, pos, CAST(time_ms AS DOUBLE) AS time_ms, kind, odds_id, price_american, dfs_multiplier, suspended')]);
      await c.run('SET threads = 1');
      await measure(c, 'one query, 1 thread', ids.slice(0, 10), (id) => [historySql(files, id, v)]);
      await c.run('SET threads = 2');
      await profileOne(c, historySql(files, ids[1], v));
      console.log(`  resident memory grew ${((process.memoryUsage().rss - rss0) / 1048576).toFixed(0)} MiB with the instance and its cached footers`);
      c.closeSync();
      db.closeSync();
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    generator.close(join(root, '.spill'));
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
