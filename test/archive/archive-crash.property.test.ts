// Every acknowledged change is in the tick archive exactly once and in log order,
// across SIGKILLs of a process that ingests at full speed while its archive flushes
// every 20 ms (so kills land inside COPY, fsync, rename and compaction alike) and its
// checkpoints delete log segments. fast-check draws how many acknowledgements each of
// two kills waits for; after them a clean start archives what the log still holds and
// the Parquet files are read back with DuckDB.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { ManualClock } from '../../engine/clock.ts';
import { attachTickArchive } from '../../ingest/archiveRows.ts';
import { listArchiveFiles } from '../../persistence/archive/archiveFiles.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { crashPrice, crashRows, CRASH_ROWS } from '../ingest/crashRows.ts';
import { openBoard } from '../ingest/ingest-helpers.ts';

/** Runs the child until `killAfter` acknowledgements, SIGKILLs it; returns batch n -> log index. */
async function runAndKill(dir: string, archiveDir: string, firstBatch: number, killAfter: number): Promise<Map<number, number>> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/archive/archiveChild.ts', dir, archiveDir, String(firstBatch)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acks = new Map<number, number>();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${code} ${signal}: ${stderr}`))));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [word, a, b] = line.split(' ');
        if (word === 'ack') acks.set(Number(a), Number(b));
        if (acks.size >= killAfter && !child.killed) child.kill('SIGKILL');
      }
    });
  });
  return acks;
}

test('SIGKILL while archiving: every acknowledged change is in the archive exactly once, in log order', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 20, max: 300 }), { minLength: 2, maxLength: 2 }), async (kills) => {
      const dir = mkdtempSync(join(tmpdir(), 'archive-crash-'));
      const archiveDir = join(dir, 'archive');
      try {
        const acked = new Map<number, number>();
        for (let round = 0; round < kills.length; round++) {
          for (const [n, index] of await runAndKill(dir, archiveDir, round * 1_000_000 + 1, kills[round])) acked.set(n, index);
        }
        const clock = new ManualClock(NOW);
        const opened = await openBoard(dir, clock, testBoard('small'));
        const ids = crashRows(opened.durable.engine);
        const archive = await attachTickArchive(opened.durable, { dir: archiveDir, retentionDays: 30, intervalMs: 0 }, { now: () => clock.now(), warn: () => {}, fsync: true });
        let lastIndex: number;
        try {
          await archive.flush();
          lastIndex = opened.durable.log.lastIndex;
          assert.equal(archive.archivedThrough, lastIndex, 'a clean start archives everything the log holds');
          assert.equal(archive.failures, 0, archive.lastError ?? '');
        } finally {
          await archive.close();
          await opened.close();
        }
        // no two files of the archive hold the same record
        const files = listArchiveFiles(archiveDir).sort((a, b) => a.first - b.first);
        for (let i = 1; i < files.length; i++) assert.ok(files[i].first > files[i - 1].last, `${files[i].path} overlaps ${files[i - 1].path}`);
        const db = await DuckDBInstance.create(':memory:');
        const connection = await db.connect();
        try {
          const glob = join(archiveDir, '*', '*.parquet').replaceAll("'", "''");
          const rows = (await connection.runAndReadAll(`SELECT CAST(seq AS DOUBLE) AS seq, pos, CAST(time_ms AS DOUBLE) AS t, kind, odds_id, price_american FROM read_parquet('${glob}') ORDER BY seq, pos`)).getRowObjects();
          // every record of the log, 1..lastIndex, each as its CRASH_ROWS ticks, once
          assert.equal(rows.length, lastIndex * CRASH_ROWS, `${rows.length} rows for ${lastIndex} records of ${CRASH_ROWS} ticks`);
          const batchAt = new Map<number, number>();
          let lastTime = -Infinity;
          for (let i = 0; i < rows.length; i++) {
            const row = rows[i];
            const seq = Math.floor(i / CRASH_ROWS) + 1;
            const pos = i % CRASH_ROWS;
            assert.equal(row.seq, seq, `row ${i} has seq ${row.seq}, expected ${seq} (a record missing or archived twice)`);
            assert.equal(row.pos, pos);
            assert.equal(row.kind, 'price');
            assert.equal(row.odds_id, ids[pos]);
            assert.ok((row.t as number) >= lastTime, 'time_ms never goes back along seq');
            lastTime = row.t as number;
            const n = ((row.price_american as number) - 100 - pos) / CRASH_ROWS;
            if (pos === 0) batchAt.set(seq, n);
            else assert.equal(n, batchAt.get(seq), `record ${seq} mixes batches`);
          }
          for (const [n, index] of acked) {
            assert.equal(batchAt.get(index), n, `acknowledged batch ${n} (record ${index}) is not in the archive as acknowledged`);
            for (let r = 0; r < CRASH_ROWS; r++) assert.equal(rows[(index - 1) * CRASH_ROWS + r].price_american, crashPrice(n, r));
          }
        } finally {
          connection.closeSync();
          db.closeSync();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: 2 },
  );
});
