// Storage faults while archiving (through the seam under the archive's fsync and
// rename, as under the log's): the failed flush is reported, leaves no file and no
// temporary, the log keeps every record the archive lacks even across checkpoints,
// and the next flush archives everything exactly once.
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { ManualClock } from '../../engine/clock.ts';
import { attachTickArchive } from '../../ingest/archiveRows.ts';
import { listArchiveFiles } from '../../persistence/archive/archiveFiles.ts';
import { FaultyStorage, type StorageFault } from '../../persistence/log/storageFaults.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { crashPrice, crashRows, CRASH_ROWS } from '../ingest/crashRows.ts';
import { openBoard, tempDataDir } from '../ingest/ingest-helpers.ts';

const board = testBoard('small');

async function archivedRows(dir: string): Promise<{ seq: number; pos: number; price_american: number }[]> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    const glob = join(dir, '*', '*.parquet').replaceAll("'", "''");
    return (await connection.runAndReadAll(`SELECT CAST(seq AS DOUBLE) AS seq, pos, price_american FROM read_parquet('${glob}') ORDER BY seq, pos`)).getRowObjects() as never;
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

for (const fault of [
  { op: 'fsync', nth: 1, kind: 'EIO' },
  { op: 'rename', nth: 1, kind: 'ENOSPC' },
] as StorageFault[]) {
  test(`a ${fault.kind} on the archive's ${fault.op}: reported, the log kept across checkpoints, archived once at the next flush`, async () => {
    const dir = tempDataDir('archive-fault-');
    const archiveDir = join(dir, 'archive');
    const clock = new ManualClock(NOW);
    const opened = await openBoard(dir, clock, board, { segmentBytes: 4 * 1024, fsync: false });
    const storage = new FaultyStorage(null);
    const warnings: string[] = [];
    const archive = await attachTickArchive(opened.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: (line) => warnings.push(line), fsync: true, storage });
    try {
      await archive.flush();
      const ids = crashRows(opened.durable.engine);
      const submitBatches = async (from: number, to: number): Promise<void> => {
        for (let n = from; n <= to; n++) {
          clock.advance(1);
          await opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
        }
      };
      await submitBatches(1, 60);
      storage.arm(fault);
      await assert.rejects(archive.flush());
      assert.equal(archive.failures, 1);
      assert.match(archive.lastError ?? '', /the log keeps them/);
      assert.ok(warnings.some((line) => line.includes('archive:')));
      assert.equal(archive.archivedThrough, 0);
      assert.deepEqual(listArchiveFiles(archiveDir), []);
      for (const day of readdirSync(archiveDir)) assert.deepEqual(readdirSync(join(archiveDir, day)).filter((name) => name.endsWith('.tmp')), []);
      // checkpoints while the archive is behind delete nothing it lacks
      await submitBatches(61, 90);
      await opened.durable.checkpointNow();
      await submitBatches(91, 100);
      await opened.durable.checkpointNow();
      assert.ok(opened.durable.log.firstIndex() <= 1, `the log starts at ${opened.durable.log.firstIndex()} with nothing archived`);
      // the next flush reads what it lacks back from the log
      const report = await archive.flush();
      assert.equal(report?.archivedThrough, 100);
      const rows = await archivedRows(archiveDir);
      assert.equal(rows.length, 100 * CRASH_ROWS);
      rows.forEach((row, i) => {
        assert.equal(row.seq, Math.floor(i / CRASH_ROWS) + 1);
        assert.equal(row.price_american, crashPrice(row.seq, i % CRASH_ROWS));
      });
      // now archived, the log may go back to the older checkpoint
      await submitBatches(101, 101);
      await opened.durable.checkpointNow();
      await archive.flush();
      assert.ok(opened.durable.log.firstIndex() > 1, 'archived records are released to the checkpoints');
    } finally {
      await archive.close();
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('an ARCHIVE_DIR written from another log is refused at start, naming the file and what to do', async () => {
  const first = tempDataDir('archive-first-');
  const second = tempDataDir('archive-second-');
  const archiveDir = join(first, 'archive');
  const clock = new ManualClock(NOW);
  try {
    const opened = await openBoard(first, clock, board, { fsync: false });
    const archive = await attachTickArchive(opened.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: () => {}, fsync: false });
    const ids = crashRows(opened.durable.engine);
    for (let n = 1; n <= 5; n++) await opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
    await archive.close();
    await opened.close();
    // a fresh DATA_DIR (its log starts again at record 1) with the old archive
    const other = await openBoard(second, clock, board, { fsync: false });
    try {
      await assert.rejects(
        attachTickArchive(other.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: () => {}, fsync: false }),
        (error: Error) => error.name === 'ArchiveMismatchError' && /0000000000000005\.parquet holds log records up to 5, but the log in DATA_DIR ends at record 0/.test(error.message) && /empty directory/.test(error.message),
      );
    } finally {
      await other.close();
    }
  } finally {
    rmSync(first, { recursive: true, force: true });
    rmSync(second, { recursive: true, force: true });
  }
});
