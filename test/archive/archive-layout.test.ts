// The archive's file layouts (persistence/archive/tickArchive.ts), fed through the real
// write path of a durable board:
// - a finished day merged into a split day (parts by event_key prefix, each sorted by
//   event_key, odds_id, seq, pos, in row groups cut at MERGED_ROW_GROUP_ROWS, marked in
//   its key-value metadata; a manifest with each part's rows, bytes and sha256) holds
//   every acknowledged change exactly once, and every read (one selection, several, a
//   market, an event, the removals) answers exactly what it answered over the flush
//   files; one selection's read needs only its event's part;
// - a merge does not hold the archive's queue: while its file is written, reads answer
//   as before and a flush goes through; after it, the same;
// - a finished day's export is its parts' rows in key order in one file, a league's
//   export its rows in that order, and a day not merged yet exports the same rows in the
//   same order;
// - closing the archive during a merge stops it: no temporary left, the day's file as it
//   was, merged after the next start;
// - a day an older version left (merged by odds id in large row groups, no event_key,
//   no removed_rows column; or merged into one file in the merged layout) reads the same,
//   and is rewritten as a split day;
// - today's flush files gathered into runs, and runs into runs of the next level, still
//   hold every change once and answer the changes acknowledged.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { ManualClock } from '../../engine/clock.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { attachTickArchive } from '../../ingest/archiveRows.ts';
import { archiveFileName, dayOf, dayStart, listArchiveFiles, listDayFiles, MANIFEST_NAME, parquetPaths, partIndexOf, readManifest, splitDirName, sqlString, type ArchiveFile } from '../../persistence/archive/archiveFiles.ts';
import { ARCHIVE_COLUMNS, eventKey, type ArchiveRow, type TickRow } from '../../persistence/archive/archiveSchema.ts';
import { LAYOUT_KEY, LEVEL_KEY, MERGED_COLUMNS, MERGED_LAYOUT, MERGED_ROW_GROUP_ROWS, mergedCopy, SPLIT_PARTS, TickArchive, type Compaction, type FlushReport } from '../../persistence/archive/tickArchive.ts';
import { ArchiveGenerator } from '../../bench/archiveGenerator.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { openBoard, tempDataDir, type OpenedBoard } from '../ingest/ingest-helpers.ts';

const board = testBoard('small');
const PER_BATCH = 200;

interface Acknowledged {
  seq: number;
  pos: number;
  odds_id: string;
  price_american: number | null;
}

interface Fed {
  dir: string;
  archiveDir: string;
  clock: ManualClock;
  opened: OpenedBoard;
  archive: TickArchive;
  ids: string[];
  removed: string;
  acknowledged: Acknowledged[];
}

/** Book rows (priced, live) from many events, at most 12 per event, and one more row to remove. */
function pickRows(opened: OpenedBoard): { ids: string[]; removed: string } {
  const engine = opened.durable.engine;
  const s = engine.store;
  const perEvent = new Map<string, number>();
  const ids: string[] = [];
  let removed = '';
  for (let slot = 0; slot < s.size && (ids.length < PER_BATCH || removed === ''); slot++) {
    if (!s.isLive(slot) || s.priceAmerican[slot] === NO_PRICE || !Number.isNaN(s.dfsMultiplier[slot])) continue;
    const id = engine.idOf(slot);
    const event = id.slice(0, id.indexOf(':'));
    const n = perEvent.get(event) ?? 0;
    if (n >= 12) continue;
    perEvent.set(event, n + 1);
    if (ids.length < PER_BATCH) ids.push(id);
    else removed = id;
  }
  assert.equal(ids.length, PER_BATCH, 'the small board has enough book rows');
  assert.ok(perEvent.size > 10, "from many events");
  return { ids, removed };
}

/** Opens a board and its archive, and feeds `batches` batches of PER_BATCH price changes (a flush every `flushEvery`), with one removal halfway. */
async function feed(batches: number, flushEvery: number, compaction?: Partial<Compaction>): Promise<Fed> {
  const dir = tempDataDir('archive-layout-');
  const archiveDir = join(dir, 'archive');
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board, { fsync: false });
  const archive = await attachTickArchive(opened.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: () => {}, fsync: false, compaction });
  const { ids, removed } = pickRows(opened);
  const acknowledged: Acknowledged[] = [];
  for (let n = 1; n <= batches; n++) {
    clock.advance(10);
    const changes = ids.map((id, r) => ({ op: 'price', id, priceAmerican: (n % 2 === 0 ? 1 : -1) * (100 + n * PER_BATCH + r) }));
    const result = await opened.durable.ingest.submit(changes);
    changes.forEach((change, pos) => acknowledged.push({ seq: result.index, pos, odds_id: change.id, price_american: change.priceAmerican }));
    if (n === Math.floor(batches / 2)) {
      const gone = await opened.durable.ingest.submit([{ op: 'remove', id: removed }]);
      acknowledged.push({ seq: gone.index, pos: 0, odds_id: removed, price_american: null });
    }
    if (n % flushEvery === 0) await archive.flush();
  }
  await archive.flush();
  assert.equal(dayOf(clock.now()), dayOf(NOW), 'every batch fell in one day');
  return { dir, archiveDir, clock, opened, archive, ids, removed, acknowledged };
}

async function withDuckDB<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** Every row of the archive's files (split days' parts included), by (seq, pos). */
async function everyRow(archiveDir: string): Promise<Acknowledged[]> {
  const paths = listArchiveFiles(archiveDir).flatMap(parquetPaths);
  if (paths.length === 0) return [];
  return withDuckDB(async (c) => (await c.runAndReadAll(`SELECT CAST(seq AS DOUBLE) AS seq, pos, odds_id, price_american FROM read_parquet([${paths.map(sqlString).join(', ')}], union_by_name = true) ORDER BY seq, pos`)).getRowObjects() as never);
}

/** The rows of Parquet files in their stored order (files in the given order), `columns` of them. */
async function storedRows(paths: readonly string[], columns = MERGED_COLUMNS, where = ''): Promise<unknown[]> {
  return withDuckDB(async (c) => {
    const out: unknown[] = [];
    for (const path of paths) out.push(...(await c.runAndReadAll(`SELECT ${columns} FROM read_parquet(${sqlString(path)}, file_row_number = true) ${where} ORDER BY file_row_number`)).getRowObjectsJson());
    return out;
  });
}

/**
 * Checks a finished day's entry is a split day as the archive writes it: its manifest
 * (each part's rows, bytes and sha256 as on disk), each part marked in the merged
 * layout, holding only keys of its range, sorted by event_key, odds_id, seq, pos across
 * the parts in order, row groups cut at MERGED_ROW_GROUP_ROWS. Returns the rows per part.
 */
async function checkSplitDay(entry: ArchiveFile, parts: number): Promise<number[]> {
  assert.ok(entry.split !== null, `${entry.path} is a split day`);
  const manifest = readManifest(entry.path);
  assert.equal(manifest.parts, parts);
  assert.equal(manifest.layout, MERGED_LAYOUT);
  assert.deepEqual(readdirSync(entry.path).sort(), [MANIFEST_NAME, ...manifest.files.map((file) => file.name)].sort());
  const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  let prev: { event_key: string; odds_id: string; seq: number; pos: number } | null = null;
  let total = 0;
  await withDuckDB(async (c) => {
    for (const file of manifest.files) {
      const path = join(entry.path, file.name);
      const bytes = readFileSync(path);
      assert.equal(bytes.length, file.bytes);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), file.sha256, `${file.name}'s sha256 is its manifest's`);
      const layout = (await c.runAndReadAll(`SELECT decode(value) AS v FROM parquet_kv_metadata(${sqlString(path)}) WHERE key = encode(${sqlString(LAYOUT_KEY)})`)).getRowObjects();
      assert.deepEqual(layout, [{ v: MERGED_LAYOUT }]);
      // row groups cut at MERGED_ROW_GROUP_ROWS (once a group holds that many, at the end of a 2,048-row vector), the last one shorter
      const groups = (await c.runAndReadAll(`SELECT DISTINCT row_group_id, CAST(row_group_num_rows AS DOUBLE) AS n FROM parquet_metadata(${sqlString(path)}) ORDER BY row_group_id`)).getRowObjects().map((row) => Number(row.n));
      assert.equal(groups.reduce((sum, n) => sum + n, 0), file.rows);
      for (const n of groups.slice(0, -1)) assert.ok(n >= MERGED_ROW_GROUP_ROWS && n < MERGED_ROW_GROUP_ROWS + 2048, `row groups ${groups.join(', ')}`);
      const stored = (await c.runAndReadAll(`SELECT event_key, event_id, odds_id, CAST(seq AS DOUBLE) AS seq, pos FROM read_parquet(${sqlString(path)}, file_row_number = true) ORDER BY file_row_number`)).getRowObjects() as { event_key: string; event_id: string; odds_id: string; seq: number; pos: number }[];
      assert.equal(stored.length, file.rows);
      total += stored.length;
      for (const row of stored) {
        assert.equal(row.event_key, eventKey(row.event_id), `DuckDB's md5 key of ${row.event_id} is node's`);
        assert.equal(partIndexOf(row.event_key, parts), partIndexOf(`${file.from}000000`, parts), `${row.event_key} is in ${file.name}'s range`);
        if (prev !== null) {
          const order = compare(prev.event_key, row.event_key) || compare(prev.odds_id, row.odds_id) || prev.seq - row.seq || prev.pos - row.pos;
          assert.ok(order < 0, `${file.name}: ${row.odds_id} ${row.seq} is after ${prev.odds_id} ${prev.seq} in the merged order`);
        }
        prev = row;
      }
    }
  });
  assert.equal(total, manifest.rows);
  return manifest.files.map((file) => file.rows);
}

/** What each read answers (rows only: how far the archive is, is not what changes). */
async function answers(fed: Fed): Promise<Record<string, TickRow[]>> {
  const { archive, ids, removed } = fed;
  const event = ids[0].slice(0, ids[0].indexOf(':'));
  const subtype = ids[0].split(':')[2];
  const far = Number.MAX_SAFE_INTEGER;
  return {
    one: (await archive.rowsOfIds([ids[0]], far)).rows,
    oneUntilHalf: (await archive.rowsOfIds([ids[7]], NOW + 10 * 20)).rows,
    several: (await archive.rowsOfIds([ids[3], ids[PER_BATCH - 1], ids[50], removed], far)).rows,
    market: (await archive.rowsOfMarket(event, subtype, far)).rows,
    event: (await archive.rowsOfEvent(event, far)).rows,
    removals: (await archive.removalsSince(NOW)).rows,
  };
}

async function cleanUp(fed: Fed): Promise<void> {
  await fed.archive.close();
  await fed.opened.close();
  rmSync(fed.dir, { recursive: true, force: true });
}

test('a finished day merged into a split day: every change once, the parts and manifest on disk, every read answering as before, its export the parts in one file', async () => {
  const fed = await feed(90, 30);
  try {
    const { archive, archiveDir, clock } = fed;
    const day = dayOf(NOW);
    assert.equal(listDayFiles(archiveDir, day).length, 3, 'one file per flush of 30 batches');
    const before = await answers(fed);
    assert.ok(before.one.length === 90 && before.several.length === 3 * 90 + 1 && before.removals.length === 1, 'the reads find what was fed');
    // (a market's read has every column; a selection's, the price path's)
    const leagueOf = (before.market[0] as ArchiveRow).league;
    assert.ok(leagueOf !== null);
    const exportDir = tempDataDir('archive-layout-export-');
    try {
      // a day not merged yet: sorted into the merged order on the way out
      const unmerged = await archive.exportDay(day, leagueOf, join(exportDir, 'unmerged.parquet'));
      // the next day: the finished day is merged at the next flush's maintenance
      clock.set(dayStart(day) + 86_400_000 + 60_000);
      await archive.flush();
      const files = listDayFiles(archiveDir, day);
      assert.equal(files.length, 1, 'the finished day is one split day');
      const first = fed.acknowledged[0].seq;
      const last = fed.acknowledged[fed.acknowledged.length - 1].seq;
      assert.equal(files[0].path, join(archiveDir, day, splitDirName(first, last)));
      assert.deepEqual(readdirSync(join(archiveDir, day)), [splitDirName(first, last)], 'its inputs deleted, no temporary left');
      // every acknowledged change exactly once, in order
      assert.deepEqual(await everyRow(archiveDir), fed.acknowledged);
      const perPart = await checkSplitDay(files[0], SPLIT_PARTS);
      assert.ok(perPart.length > 1, `the day's events spread over ${perPart.length} parts`);
      // every read answers exactly as over the flush files
      assert.deepEqual(await answers(fed), before);
      // the export of a finished day: its parts' rows in key order, in one file; a league's, its rows in that order, as before the merge
      const whole = await archive.exportDay(day, null, join(exportDir, 'day.parquet'));
      assert.equal(whole.rows, fed.acknowledged.length);
      const parts = parquetPaths(files[0]);
      assert.deepEqual(await storedRows([join(exportDir, 'day.parquet')]), await storedRows(parts));
      await withDuckDB(async (c) => {
        const layout = (await c.runAndReadAll(`SELECT decode(value) AS v FROM parquet_kv_metadata(${sqlString(join(exportDir, 'day.parquet'))}) WHERE key = encode(${sqlString(LAYOUT_KEY)})`)).getRowObjects();
        assert.deepEqual(layout, [{ v: MERGED_LAYOUT }], 'the export is one file in the merged layout');
      });
      const league = await archive.exportDay(day, leagueOf, join(exportDir, 'league.parquet'));
      assert.equal(league.rows, unmerged.rows);
      const expected = await storedRows(parts, MERGED_COLUMNS, `WHERE league = ${sqlString(leagueOf)}`);
      assert.ok(expected.length > 0 && expected.length < fed.acknowledged.length);
      assert.deepEqual(await storedRows([join(exportDir, 'league.parquet')]), expected);
      assert.deepEqual(await storedRows([join(exportDir, 'unmerged.parquet')]), expected);
    } finally {
      rmSync(exportDir, { recursive: true, force: true });
    }
  } finally {
    await cleanUp(fed);
  }
});

// (a read or flush queued behind the merge would wait for the hook, and the hook for it: the timeout fails the test)
test("a merge does not hold the archive's queue: while its file is written, reads answer as before and a flush goes through; after it, the same", { timeout: 60_000 }, async () => {
  const fed = await feed(60, 20);
  try {
    const { archive, archiveDir, clock, opened, ids } = fed;
    const day = dayOf(NOW);
    const inputs = listDayFiles(archiveDir, day).map((file) => file.path);
    assert.equal(inputs.length, 3, 'one file per flush of 20 batches');
    const before = await answers(fed);
    // what went on while the merge waited to be installed
    const seen: { answers?: Record<string, TickRow[]>; files?: string[]; flushed?: FlushReport; seq?: number } = {};
    archive.onMergeWritten = async (mergedDay, temp) => {
      if (mergedDay !== day) return;
      assert.ok(existsSync(temp), 'the merged file is written, under its temporary name');
      // with the merge waiting here, a read queued behind it would never come back
      seen.answers = await answers(fed);
      seen.files = listDayFiles(archiveDir, day).map((file) => file.path);
      // a change of the new day, and a flush of it, go through too
      const flushed = new Promise<FlushReport>((resolve) => (archive.onFlush = resolve));
      seen.seq = (await opened.durable.ingest.submit([{ op: 'price', id: ids[0], priceAmerican: -150 }])).index;
      void archive.flush().catch(() => {});
      seen.flushed = await flushed;
    };
    // the next day: the finished day is merged at the next flush's maintenance
    clock.set(dayStart(day) + 86_400_000 + 60_000);
    await archive.flush();
    assert.deepEqual(seen.answers, before, 'reads while the merged file was written answer as before');
    assert.deepEqual(seen.files, inputs, 'from the inputs, still in place');
    assert.ok(seen.seq !== undefined && seen.flushed !== undefined);
    assert.equal(seen.flushed.archivedThrough, seen.seq, 'the flush wrote the new change while the merge waited');
    const files = listDayFiles(archiveDir, day);
    assert.equal(files.length, 1, 'then the split day replaced its inputs');
    assert.equal(files[0].path, join(archiveDir, day, splitDirName(fed.acknowledged[0].seq, fed.acknowledged[fed.acknowledged.length - 1].seq)));
    // every change once: the day's, then the new one
    assert.deepEqual(await everyRow(archiveDir), [...fed.acknowledged, { seq: seen.seq, pos: 0, odds_id: ids[0], price_american: -150 }]);
    const ofDay = (all: Record<string, TickRow[]>): Record<string, TickRow[]> => Object.fromEntries(Object.entries(all).map(([name, rows]) => [name, rows.filter((row) => dayOf(row.time_ms) === day)]));
    assert.deepEqual(ofDay(await answers(fed)), before, 'and the same after it');
  } finally {
    await cleanUp(fed);
  }
});

test("closing during a merge stops it: no temporary left, the day's file as it was, split after the next start (row groups cut in its parts)", { timeout: 120_000 }, async () => {
  const dir = tempDataDir('archive-close-merge-');
  try {
    // a finished day of 1,000,000 changes in one plain file (bench/archiveGenerator.ts): its merge takes seconds
    const rows = 1_000_000;
    const generator = await ArchiveGenerator.open({ events: 100, selectionsPerEvent: 50, rowsPerDay: rows }, join(dir, '.generate'), NOW);
    const day = dayOf(NOW - 86_400_000);
    const plain = (await generator.day(dir, day, 1, null)).path;
    generator.close(join(dir, '.generate'));
    const before = statSync(plain);
    const warnings: string[] = [];
    // in 16 parts: each holds some 62,500 rows, so its row groups are cut at MERGED_ROW_GROUP_ROWS
    const open = (): Promise<TickArchive> =>
      TickArchive.open({ dir, retentionDays: 30, intervalMs: 0, now: () => NOW, warn: (line) => warnings.push(line), source: { rowsOf: () => {} }, log: { lastIndex: rows, firstIndex: () => rows + 1, replay: () => {}, archived: () => {} }, compaction: { splitParts: 16 } });
    const layoutOf = async (path: string): Promise<unknown[]> =>
      withDuckDB(async (c) => (await c.runAndReadAll(`SELECT decode(value) AS v FROM parquet_kv_metadata(${sqlString(path)}) WHERE key = encode(${sqlString(LAYOUT_KEY)})`)).getRowObjects());
    const archive = await open();
    let settled = false;
    const merging = archive.flush().finally(() => (settled = true));
    // under way once its temporary appears
    while (!settled && !readdirSync(join(dir, day)).some((name) => name.endsWith('.tmp'))) await sleep(5);
    assert.equal(settled, false, 'the merge was seen under way');
    await archive.abandon();
    await merging;
    assert.deepEqual(readdirSync(join(dir, day)), [basename(plain)], 'no temporary left');
    const after = statSync(plain);
    assert.deepEqual([after.size, after.mtimeMs], [before.size, before.mtimeMs], "the day's file as it was");
    assert.deepEqual(await layoutOf(plain), [], 'not merged');
    assert.deepEqual(warnings, [], 'a stop, not a failure');
    // the next start merges it (rewritten as a split day)
    const again = await open();
    try {
      await again.flush();
      const entries = listDayFiles(dir, day);
      assert.deepEqual(entries.map((entry) => basename(entry.path)), [splitDirName(1, rows)], 'the plain file replaced by the split day');
      const perPart = await checkSplitDay(entries[0], 16);
      assert.ok(perPart.some((n) => n > 2 * MERGED_ROW_GROUP_ROWS), `parts of ${perPart.join(', ')} rows: some cut into row groups`);
      assert.equal((await again.rowsOfIds([(await again.rowsOfEvent('nba-20261121-0001-AW-HM', Number.MAX_SAFE_INTEGER)).rows[0].odds_id as string], Number.MAX_SAFE_INTEGER)).rows.length, rows / (100 * 50));
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a day an older version merged (by odds id, no event_key, no removed_rows) reads the same, then is rewritten as a split day', async () => {
  const fed = await feed(30, 10);
  try {
    const { archiveDir, clock, opened } = fed;
    const day = dayOf(NOW);
    const withoutRemovedRows = (all: Record<string, TickRow[]>): Record<string, TickRow[]> => Object.fromEntries(Object.entries(all).map(([name, rows]) => [name, rows.map((row) => ('removed_rows' in row ? { ...row, removed_rows: null } : row))]));
    const before = withoutRemovedRows(await answers(fed));
    await fed.archive.close();
    // the day as the first archive version merged it
    const files = listDayFiles(archiveDir, day);
    const first = files[0].first;
    const last = files[files.length - 1].last;
    const oldFile = join(archiveDir, day, archiveFileName(first, last));
    const columns = ARCHIVE_COLUMNS.map((column) => column.name).filter((name) => name !== 'removed_rows');
    await withDuckDB(async (c) => {
      await c.run(`COPY (SELECT ${columns.join(', ')} FROM read_parquet([${files.map((file) => sqlString(file.path)).join(', ')}]) ORDER BY odds_id, seq, pos) TO ${sqlString(`${oldFile}.old`)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
    });
    for (const file of files) rmSync(file.path);
    renameSync(`${oldFile}.old`, oldFile);
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(oldFile, anHourAgo, anHourAgo);
    fed.archive = await attachTickArchive(opened.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: () => {}, fsync: false });
    await fed.archive.flush();
    assert.deepEqual(listDayFiles(archiveDir, day).map((file) => file.path), [oldFile], 'today: not rewritten yet');
    assert.deepEqual(await answers(fed), before, 'the older layout reads the same (removed_rows: null)');
    // finished: rewritten as a split day, the old file deleted
    clock.set(dayStart(day) + 86_400_000 + 60_000);
    await fed.archive.flush();
    const entries = listDayFiles(archiveDir, day);
    assert.deepEqual(entries.map((file) => file.path), [join(archiveDir, day, splitDirName(first, last))]);
    assert.equal(existsSync(oldFile), false);
    await checkSplitDay(entries[0], SPLIT_PARTS);
    assert.deepEqual(await everyRow(archiveDir), fed.acknowledged);
    assert.deepEqual(await answers(fed), before, 'and the same after its rewrite');
  } finally {
    await cleanUp(fed);
  }
});

test("a day the previous version merged into one file (the merged layout, not split): read as it is, exported as that file, then rewritten as a split day", async () => {
  const fed = await feed(30, 10);
  try {
    const { archiveDir, clock, opened } = fed;
    const day = dayOf(NOW);
    const before = await answers(fed);
    await fed.archive.close();
    // the day as the previous version merged it: one file, sorted by event_key, odds_id, seq, pos, marked as a finished day
    const files = listDayFiles(archiveDir, day);
    const first = files[0].first;
    const last = files[files.length - 1].last;
    const oldFile = join(archiveDir, day, archiveFileName(first, last));
    await withDuckDB(async (c) => {
      await c.run(`COPY (SELECT *, substr(md5(event_id), 1, 8) AS event_key FROM read_parquet([${files.map((file) => sqlString(file.path)).join(', ')}]) ORDER BY event_key, odds_id, seq, pos) TO ${sqlString(`${oldFile}.old`)} (${mergedCopy(3)})`);
    });
    for (const file of files) rmSync(file.path);
    renameSync(`${oldFile}.old`, oldFile);
    // still its day: a finished day's file of the merged layout is not merged again today
    fed.archive = await attachTickArchive(opened.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: () => {}, fsync: false });
    assert.deepEqual(await answers(fed), before, 'the single merged file reads the same');
    const exportDir = tempDataDir('archive-layout-export-');
    try {
      await fed.archive.exportDay(day, null, join(exportDir, 'day.parquet'));
      assert.ok(readFileSync(join(exportDir, 'day.parquet')).equals(readFileSync(oldFile)), "its export is that file");
    } finally {
      rmSync(exportDir, { recursive: true, force: true });
    }
    // finished: rewritten as a split day
    clock.set(dayStart(day) + 86_400_000 + 60_000);
    await fed.archive.flush();
    const entries = listDayFiles(archiveDir, day);
    assert.deepEqual(entries.map((file) => file.path), [join(archiveDir, day, splitDirName(first, last))]);
    assert.deepEqual(readdirSync(join(archiveDir, day)), [splitDirName(first, last)], 'the single file deleted once the split day was installed');
    await checkSplitDay(entries[0], SPLIT_PARTS);
    assert.deepEqual(await everyRow(archiveDir), fed.acknowledged);
    assert.deepEqual(await answers(fed), before, 'and the same split');
  } finally {
    await cleanUp(fed);
  }
});

test("one selection's history reads one part per day: with the other parts of its days moved away it answers the same; an event in a moved part does not", async () => {
  const fed = await feed(20, 10);
  try {
    const { archive, archiveDir, clock, opened, ids } = fed;
    const day = dayOf(NOW);
    const far = Number.MAX_SAFE_INTEGER;
    // day 1 merged; then a second day of changes, merged too
    clock.set(dayStart(day) + 86_400_000 + 60_000);
    await archive.flush();
    const second: Acknowledged[] = [];
    for (let n = 1; n <= 5; n++) {
      clock.advance(10);
      const changes = ids.map((id, r) => ({ op: 'price', id, priceAmerican: -(300 + n * PER_BATCH + r) }));
      const result = await opened.durable.ingest.submit(changes);
      changes.forEach((change, pos) => second.push({ seq: result.index, pos, odds_id: change.id, price_american: change.priceAmerican }));
    }
    await archive.flush();
    clock.set(dayStart(day) + 2 * 86_400_000 + 60_000);
    await archive.flush();
    const days = [day, dayOf(dayStart(day) + 86_400_000)];
    const entries = days.map((d) => listDayFiles(archiveDir, d));
    assert.deepEqual(entries.map((list) => list.length), [1, 1]);
    assert.ok(entries.every((list) => list[0].split !== null), 'both days split');
    const id = ids[0];
    const event = id.slice(0, id.indexOf(':'));
    const other = ids.find((candidate) => partIndexOf(eventKey(candidate.slice(0, candidate.indexOf(':'))), SPLIT_PARTS) !== partIndexOf(eventKey(event), SPLIT_PARTS));
    assert.ok(other !== undefined, 'an event in another part');
    const history = (await archive.rowsOfIds([id], far)).rows;
    assert.deepEqual(history.map((row) => row.seq), [...fed.acknowledged, ...second].filter((a) => a.odds_id === id).map((a) => a.seq), 'both days of it');
    const otherHistory = (await archive.rowsOfIds([other], far)).rows;
    assert.ok(otherHistory.length > 0);
    // every part but the one holding the event's key, moved out of each day
    const aside = tempDataDir('archive-layout-aside-');
    try {
      let moved = 0;
      for (const [d, list] of entries.entries()) {
        const wanted = `part-${readManifest(list[0].path).files.find((file) => partIndexOf(`${file.from}000000`, SPLIT_PARTS) === partIndexOf(eventKey(event), SPLIT_PARTS))!.from}.parquet`;
        for (const path of parquetPaths(list[0])) {
          if (basename(path) === wanted) continue;
          renameSync(path, join(aside, `${d}-${basename(path)}`));
          moved++;
        }
      }
      assert.ok(moved >= 2);
      assert.deepEqual((await archive.rowsOfIds([id], far)).rows, history, 'one part per day is all it reads');
      await assert.rejects(archive.rowsOfIds([other], far), /part-/, "another event's query reads its own part, moved away");
    } finally {
      // put back (for the close)
      for (const name of readdirSync(aside)) {
        const d = Number(name.slice(0, name.indexOf('-')));
        renameSync(join(aside, name), join(entries[d][0].path, name.slice(name.indexOf('-') + 1)));
      }
      rmSync(aside, { recursive: true, force: true });
    }
    assert.deepEqual((await archive.rowsOfIds([other], far)).rows, otherHistory);
  } finally {
    await cleanUp(fed);
  }
});

test("today's flush files gathered into runs (level 1), runs into level 2: every change once, the reads answer what was acknowledged", async () => {
  // a run of every 3 flush files, a level-2 run of every 2 runs: after 12 flushes and one
  // more pass, two level-2 runs (flushes 1-6 and 7-12)
  const fed = await feed(12, 1, { runFiles: 3, runsPerLevel: 2 });
  try {
    const { archive, archiveDir, acknowledged, ids, removed } = fed;
    const files = listDayFiles(archiveDir, dayOf(NOW));
    assert.equal(files.length, 2);
    await withDuckDB(async (c) => {
      for (const file of files) {
        const kv = (await c.runAndReadAll(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${sqlString(file.path)}) ORDER BY k`)).getRowObjects();
        assert.deepEqual(kv, [
          { k: LAYOUT_KEY, v: MERGED_LAYOUT },
          { k: LEVEL_KEY, v: '2' },
        ]);
      }
    });
    assert.equal(files[0].first, acknowledged[0].seq);
    assert.equal(files[1].last, acknowledged[acknowledged.length - 1].seq);
    assert.equal(files[1].first, files[0].last + 1);
    assert.deepEqual(await everyRow(archiveDir), acknowledged);
    const points = (rows: TickRow[]): Acknowledged[] => rows.map((row) => ({ seq: row.seq, pos: row.pos, odds_id: row.odds_id as string, price_american: row.price_american }));
    const ofIds = (wanted: string[]): Acknowledged[] => acknowledged.filter((a) => wanted.includes(a.odds_id));
    assert.deepEqual(points((await archive.rowsOfIds([ids[5]], Number.MAX_SAFE_INTEGER)).rows), ofIds([ids[5]]));
    assert.deepEqual(points((await archive.rowsOfIds([ids[9], removed, ids[120]], Number.MAX_SAFE_INTEGER)).rows), ofIds([ids[9], removed, ids[120]]));
    const [event, , subtype] = ids[40].split(':');
    const market = (await archive.rowsOfMarket(event, subtype, Number.MAX_SAFE_INTEGER)).rows;
    assert.deepEqual(points(market), acknowledged.filter((a) => a.odds_id.startsWith(`${event}:`) && a.odds_id.split(':')[2] === subtype));
    assert.ok(market.length >= 12);
    assert.deepEqual((await archive.removalsSince(NOW)).rows.map((row) => row.odds_id), [removed]);
  } finally {
    await cleanUp(fed);
  }
});
