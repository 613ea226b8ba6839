// A finished day installed as a split day (persistence/archive/tickArchive.ts) appears
// whole or not at all:
// - a crash at each storage step of the installation (each part's fsync, the manifest's
//   write and fsync, the directory's fsync, its rename, the day directory's fsync, the
//   input's deletion), through the storage seam: the next start finds either the day's
//   old file or the split day, every change in it once, the reads answering the same;
// - a real SIGKILL of a process splitting the day, at each stage (sorting into the
//   temporary file, cutting parts into the temporary directory, its manifest written,
//   the directory installed): the same;
// - a split day damaged at rest (a part missing, a part cut, the manifest gone) stops
//   the start with the part and what moving it away drops.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, truncateSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { dayOf, listDayFiles, MANIFEST_NAME, parquetPaths, splitDirName, sqlString } from '../../persistence/archive/archiveFiles.ts';
import { TickArchive } from '../../persistence/archive/tickArchive.ts';
import type { Storage } from '../../persistence/log/storage.ts';
import { FaultyStorage, type StorageFault } from '../../persistence/log/storageFaults.ts';
import { ArchiveGenerator } from '../../bench/archiveGenerator.ts';
import { NOW } from '../helpers/app.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';

const ROWS = 40_000;
const EVENTS = 40;
const DAY = dayOf(NOW - 86_400_000);
/** The day after DAY: it is finished. */
const AFTER = NOW;

/** One finished day of ROWS changes as one plain file (as a flush, or a day never merged, leaves it); returns its directory and a few odds ids. */
async function sourceDay(): Promise<{ dir: string; ids: string[] }> {
  const dir = tempDataDir('archive-split-source-');
  const generator = await ArchiveGenerator.open({ events: EVENTS, selectionsPerEvent: 50, rowsPerDay: ROWS }, join(dir, '.generate'), NOW);
  try {
    await generator.day(dir, DAY, 1, null);
    return { dir, ids: await generator.sampleIds(3) };
  } finally {
    generator.close(join(dir, '.generate'));
  }
}

function openArchive(dir: string, storage?: Storage, warn: (line: string) => void = () => {}): Promise<TickArchive> {
  return TickArchive.open({ dir, retentionDays: 30, intervalMs: 0, fsync: true, storage, now: () => AFTER, warn, source: { rowsOf: () => {} }, log: { lastIndex: ROWS, firstIndex: () => ROWS + 1, replay: () => {}, archived: () => {} }, compaction: { splitParts: 16 } });
}

/**
 * What a start finds after the crash: the day as one entry (the old file or the split
 * day), no temporary, every change 1..ROWS once, each id's history as before; then the
 * day split by the next maintenance, and the same again. Returns which it found.
 */
async function checkAfterCrash(dir: string, ids: readonly string[], expected: Map<string, number[]>): Promise<'old' | 'split'> {
  const archive = await openArchive(dir);
  let found: 'old' | 'split';
  try {
    const names = readdirSync(join(dir, DAY));
    assert.deepEqual(names.filter((name) => name.endsWith('.tmp')), [], 'no temporary left after the start');
    const check = async (): Promise<'old' | 'split'> => {
      const entries = listDayFiles(dir, DAY);
      assert.equal(entries.length, 1, `one entry: ${readdirSync(join(dir, DAY)).join(', ')}`);
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      try {
        const row = (await c.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT seq) AS d, CAST(min(seq) AS DOUBLE) AS lo, CAST(max(seq) AS DOUBLE) AS hi FROM read_parquet([${parquetPaths(entries[0]).map(sqlString).join(', ')}])`)).getRowObjects()[0];
        assert.deepEqual([Number(row.n), Number(row.d), row.lo, row.hi], [ROWS, ROWS, 1, ROWS], 'every change once');
      } finally {
        c.closeSync();
        db.closeSync();
      }
      for (const id of ids) assert.deepEqual((await archive.rowsOfIds([id], Number.MAX_SAFE_INTEGER)).rows.map((r) => r.seq), expected.get(id));
      return entries[0].split === null ? 'old' : 'split';
    };
    found = await check();
    await archive.flush();
    assert.equal(await check(), 'split', 'split by the next maintenance');
    assert.equal(archive.failures, 0);
  } finally {
    await archive.close();
  }
  return found;
}

/** Each id's history (seqs) over the plain day. */
async function historiesOf(dir: string, ids: readonly string[]): Promise<Map<string, number[]>> {
  const copy = `${dir}-histories`;
  cpSync(dir, copy, { recursive: true });
  // no maintenance: nothing merged, the plain file read as it is
  const archive = await openArchive(copy);
  try {
    const out = new Map<string, number[]>();
    for (const id of ids) out.set(id, (await archive.rowsOfIds([id], Number.MAX_SAFE_INTEGER)).rows.map((r) => r.seq));
    assert.ok([...out.values()].every((seqs) => seqs.length === ROWS / (EVENTS * 50)));
    return out;
  } finally {
    await archive.abandon();
    rmSync(copy, { recursive: true, force: true });
  }
}

test('a crash at each storage step of installing a split day: the next start finds the old file or the split day, whole, every change once', { timeout: 120_000 }, async () => {
  const source = await sourceDay();
  try {
    const expected = await historiesOf(source.dir, source.ids);
    // a clean split through the seam: how many operations of each kind it makes
    const counting = new FaultyStorage(null);
    const run = `${source.dir}-count`;
    cpSync(source.dir, run, { recursive: true });
    const clean = await openArchive(run, counting);
    await clean.flush();
    await clean.close();
    const parts = listDayFiles(run, DAY)[0].split?.paths.length ?? 0;
    rmSync(run, { recursive: true, force: true });
    assert.ok(parts > 4, `${parts} parts`);
    // fsyncs: each part, the manifest, the temporary directory, the day directory after the rename, after the deletion
    assert.deepEqual({ ...counting.counts }, { write: 1, fsync: parts + 4, rename: 1, truncate: 0, unlink: 1 });
    const steps: { step: string; fault: StorageFault; after: 'old' | 'split' }[] = [
      { step: "the first part's fsync", fault: { op: 'fsync', nth: 1, kind: 'crash' }, after: 'old' },
      { step: "the last part's fsync", fault: { op: 'fsync', nth: parts, kind: 'crash' }, after: 'old' },
      { step: "the manifest's write (half of it written)", fault: { op: 'write', nth: 1, kind: 'crash' }, after: 'old' },
      { step: "the manifest's fsync", fault: { op: 'fsync', nth: parts + 1, kind: 'crash' }, after: 'old' },
      { step: "the temporary directory's fsync", fault: { op: 'fsync', nth: parts + 2, kind: 'crash' }, after: 'old' },
      { step: "the directory's rename", fault: { op: 'rename', nth: 1, kind: 'crash' }, after: 'old' },
      { step: "the day directory's fsync after the rename", fault: { op: 'fsync', nth: parts + 3, kind: 'crash' }, after: 'split' },
      { step: "the old file's deletion", fault: { op: 'unlink', nth: 1, kind: 'crash' }, after: 'split' },
      { step: "the day directory's fsync after the deletion", fault: { op: 'fsync', nth: parts + 4, kind: 'crash' }, after: 'split' },
    ];
    for (const { step, fault, after } of steps) {
      const dir = `${source.dir}-${fault.op}-${fault.nth}`;
      cpSync(source.dir, dir, { recursive: true });
      try {
        const storage = new FaultyStorage(fault);
        const warnings: string[] = [];
        const archive = await openArchive(dir, storage, (line) => warnings.push(line));
        await archive.flush();
        await archive.abandon();
        assert.ok(storage.fired, `${step}: the crash happened`);
        assert.ok(warnings.some((line) => /crashed \(simulated\)/.test(line)), `${step}: reported (${warnings.join(' | ')})`);
        assert.equal(await checkAfterCrash(dir, source.ids, expected), after, `${step}: the start found the ${after} day`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(source.dir, { recursive: true, force: true });
  }
});

/** Runs the child on `dir` and SIGKILLs it once `stage` holds of the day directory (or lets it finish); returns whether it was killed. */
async function killAt(dir: string, stage: (names: string[]) => boolean): Promise<boolean> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/archive/splitMergeChild.ts', dir, String(ROWS), String(AFTER)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  const dayDir = join(dir, DAY);
  while (!done) {
    if (stdout.includes('open') && stage(readdirSync(dayDir))) {
      child.kill('SIGKILL');
      break;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { code, signal } = await exited;
  if (signal !== 'SIGKILL') assert.equal(code, 0, stderr);
  return signal === 'SIGKILL';
}

test('SIGKILL at each stage of splitting a finished day: the next start finds the old file or the split day, whole, every change once', { timeout: 120_000 }, async () => {
  const source = await sourceDay();
  try {
    const expected = await historiesOf(source.dir, source.ids);
    const tempDir = (names: string[]): string | undefined => names.find((name) => /\.parts\.\d+\.tmp$/.test(name));
    const stages: { stage: string; holds: (dir: string, names: string[]) => boolean }[] = [
      { stage: 'the day sorted into its temporary file', holds: (_, names) => names.some((name) => /\.parquet\.\d+\.tmp$/.test(name)) },
      { stage: 'parts cut into the temporary directory', holds: (dir, names) => tempDir(names) !== undefined && readdirSync(join(dir, DAY, tempDir(names)!)).some((name) => name.endsWith('.parquet')) },
      { stage: 'the manifest written', holds: (dir, names) => tempDir(names) !== undefined && existsSync(join(dir, DAY, tempDir(names)!, MANIFEST_NAME)) },
      { stage: 'the split day installed', holds: (_, names) => names.includes(splitDirName(1, ROWS)) },
    ];
    let killed = 0;
    for (const { stage, holds } of stages) {
      const dir = `${source.dir}-kill-${killed}-${stage.length}`;
      cpSync(source.dir, dir, { recursive: true });
      try {
        if (await killAt(dir, (names) => { try { return holds(dir, names); } catch { return false; } })) killed++;
        await checkAfterCrash(dir, source.ids, expected).catch((error: Error) => {
          throw new Error(`killed at ${stage}: ${error.message}`);
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    assert.ok(killed >= 2, `the child was killed mid-split in ${killed} of ${stages.length} stages`);
  } finally {
    rmSync(source.dir, { recursive: true, force: true });
  }
});

test('a split day damaged at rest stops the start: the part, its records, and what moving it away drops', { timeout: 60_000 }, async () => {
  const source = await sourceDay();
  try {
    const archive = await openArchive(source.dir);
    await archive.flush();
    await archive.close();
    const entry = listDayFiles(source.dir, DAY)[0];
    assert.ok(entry.split !== null);
    const part = entry.split.manifest.files[1].name;
    const partPath = (dir: string): string => join(dir, DAY, splitDirName(1, ROWS), part);
    const damages: { damage: string; apply: (dir: string) => void; message: RegExp }[] = [
      { damage: 'a part missing', apply: (dir) => unlinkSync(partPath(dir)), message: new RegExp(`${part.replace('.', '\\.')} is missing`) },
      { damage: 'a part cut short', apply: (dir) => truncateSync(partPath(dir), 100), message: new RegExp(`${part.replace('.', '\\.')} has 100 bytes, its manifest says \\d+`) },
      { damage: 'the manifest gone', apply: (dir) => unlinkSync(join(dir, DAY, splitDirName(1, ROWS), MANIFEST_NAME)), message: /has no manifest\.json/ },
    ];
    for (const { damage, apply, message } of damages) {
      const dir = `${source.dir}-damaged`;
      cpSync(source.dir, dir, { recursive: true });
      try {
        apply(dir);
        await assert.rejects(openArchive(dir), (error: Error) => error.name === 'ArchiveDamagedError' && message.test(error.message) && /move .* away/.test(error.message) && /leave the archive/.test(error.message), damage);
        assert.ok(existsSync(join(dir, DAY, splitDirName(1, ROWS))), `${damage}: nothing deleted`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(source.dir, { recursive: true, force: true });
  }
});
