// The durable board against storage faults, through the storage seam under the log and
// the checkpoint writer (persistence/log/storageFaults.ts) and with files damaged at
// rest: a checkpoint that fails at any step (a short write on a full disk, ENOSPC, EIO
// at its fsync, rename or directory fsync) keeps the previous checkpoint and is counted;
// an fsync error of the log is not retried: the batch and the ones queued behind it get
// log_unavailable, every later one too, and a restart recovers from the log; a damaged
// newest checkpoint falls back to the older one plus the log, or the start refuses
// naming the file, the offset and what repair would drop; damage in log records a
// checkpoint covers does not stop a start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { RestoreRefusedError } from '../../ingest/durableBoard.ts';
import { IngestError } from '../../ingest/ingest.ts';
import { checkpointLayout, listCheckpoints } from '../../persistence/log/checkpointFiles.ts';
import { DataDirLockedError } from '../../persistence/log/dataDirLock.ts';
import { walDir } from '../../persistence/log/fileBatchLog.ts';
import { FRAME_HEADER_BYTES, listSegments, SEGMENT_HEADER_BYTES } from '../../persistence/log/segments.ts';
import { FaultyStorage, type FaultKind } from '../../persistence/log/storageFaults.ts';
import type { StorageOp } from '../../persistence/log/storage.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { crashPrice, crashRows, pricesAre, submitBatches } from '../ingest/crashRows.ts';
import { openBoard, tempDataDir, type OpenedBoard } from '../ingest/ingest-helpers.ts';

// generated here rather than through helpers/app.ts: no server starts, so test/run.ts runs this file once, not once per transport
const board = generateBoard({ size: 'small', seed: 42, now: NOW });
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = tempDataDir('durability-');
  dirs.push(dir);
  return dir;
}

const checkpointFaults: { op: StorageOp; nth: number; kind: FaultKind; step: RegExp }[] = [
  { op: 'write', nth: 1, kind: 'short', step: /at write/ },
  { op: 'write', nth: 1, kind: 'ENOSPC', step: /at write: ENOSPC/ },
  { op: 'fsync', nth: 1, kind: 'EIO', step: /at fsync: EIO/ },
  { op: 'rename', nth: 1, kind: 'EIO', step: /at rename: EIO/ },
  { op: 'fsync', nth: 2, kind: 'EIO', step: /at directory fsync: EIO/ },
];

for (const fault of checkpointFaults) {
  test(`a checkpoint failing with ${fault.kind} at ${fault.op} #${fault.nth} keeps the previous checkpoint; the board restores exactly`, async () => {
    const dir = dataDir();
    const clock = new ManualClock(NOW);
    const storage = new FaultyStorage(null);
    const lines: string[] = [];
    const opened = await openBoard(dir, clock, board, { storage, warn: (line) => lines.push(line) });
    await submitBatches(opened, clock, 1, 5);
    const before = listCheckpoints(dir);
    const beforeBytes = readFileSync(before[0]!.path);
    storage.arm({ op: fault.op, nth: fault.nth, kind: fault.kind });
    let failures = 0;
    opened.durable.onCheckpointFailed = () => failures++;
    await assert.rejects(opened.durable.checkpointNow(), (error: Error) => {
      assert.match(error.message, fault.step);
      assert.match(error.message, /the previous checkpoint is kept/);
      return true;
    });
    assert.equal(failures, 1);
    assert.equal(opened.durable.checkpointFailures, 1);
    assert.ok(lines.some((l) => /checkpoint failed/.test(l)), lines.join('\n'));
    const after = listCheckpoints(dir);
    if (fault.op === 'fsync' && fault.nth === 2) {
      // renamed already when the directory fsync failed: the new file is whole and checked, the old one stays too
      assert.deepEqual(after.map((c) => c.logIndex), [5, 0]);
    } else {
      assert.deepEqual(after.map((c) => c.logIndex), before.map((c) => c.logIndex));
      assert.ok(!readdirSync(dir).some((n) => n.endsWith('.tmp')), 'the temporary file is deleted');
    }
    assert.ok(readFileSync(before[0]!.path).equals(beforeBytes), 'the previous checkpoint is untouched');
    // batches go on once there is room again; the next checkpoint succeeds
    storage.roomAgain();
    await submitBatches(opened, clock, 6, 8);
    await opened.durable.checkpointNow();
    await submitBatches(opened, clock, 9, 10);
    await opened.close();
    const reopened = await openBoard(dir, new ManualClock(NOW), board);
    assert.equal(reopened.durable.ingest.appliedIndex, 10);
    pricesAre(reopened, 10);
    await reopened.close();
  });
}

test('an fsync error of the log is not retried: that batch and the ones behind it get log_unavailable, so does every later one; a restart recovers from the log', async () => {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const storage = new FaultyStorage(null);
  const opened = await openBoard(dir, clock, board, { storage });
  await submitBatches(opened, clock, 1, 3);
  storage.arm({ op: 'fsync', nth: 1, kind: 'EIO' });
  const fsyncsBefore = storage.counts.fsync;
  const ids = crashRows(opened.durable.engine);
  const waiting = [4, 5, 6].map((n) => opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) }))));
  const answers = await Promise.allSettled(waiting);
  for (const answer of answers) {
    assert.equal(answer.status, 'rejected');
    assert.ok(answer.reason instanceof IngestError && answer.reason.code === 'log_unavailable', String(answer.reason));
  }
  assert.equal(storage.counts.fsync - fsyncsBefore, 1, 'the failed fsync was not tried again');
  assert.ok(opened.durable.log.broken);
  await assert.rejects(opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(7, r) }))), (error: unknown) => error instanceof IngestError && error.code === 'log_unavailable' && /refuses appends until restart/.test(error.message));
  pricesAre(opened, 3);
  await opened.close();
  const reopened = await openBoard(dir, new ManualClock(NOW + 60_000), board);
  assert.equal(reopened.durable.ingest.appliedIndex, 3, 'the refused batches are not replayed');
  pricesAre(reopened, 3);
  await submitBatches(reopened, new ManualClock(NOW + 120_000), 8, 8);
  await reopened.close();
});

/** A board with two checkpoints (after batches 4 and 8) and log records up to 10. */
async function twoCheckpoints(): Promise<string> {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board, { segmentBytes: 4096 });
  await submitBatches(opened, clock, 1, 4);
  await opened.durable.checkpointNow();
  await submitBatches(opened, clock, 5, 8);
  await opened.durable.checkpointNow();
  await submitBatches(opened, clock, 9, 10);
  await opened.close();
  assert.deepEqual(listCheckpoints(dir).map((c) => c.logIndex), [8, 4]);
  return dir;
}

function flip(path: string, offset: number): void {
  const bytes = readFileSync(path);
  bytes[offset] ^= 0x20;
  writeFileSync(path, bytes);
}

test('a damaged newest checkpoint falls back to the older one plus the log, exactly, and is set aside', async () => {
  for (const part of ['header', 'body', 'trailer'] as const) {
    const dir = await twoCheckpoints();
    const newest = listCheckpoints(dir)[0]!;
    const layout = checkpointLayout(readFileSync(newest.path));
    flip(newest.path, part === 'header' ? 20 : part === 'body' ? layout.bodyStart + 100 : layout.bodyEnd + 3);
    const lines: string[] = [];
    const opened = await openBoard(dir, new ManualClock(NOW), board, { warn: (line) => lines.push(line) });
    assert.equal(opened.durable.restore.checkpoint?.logIndex, 4, part);
    assert.equal(opened.durable.ingest.appliedIndex, 10);
    pricesAre(opened, 10);
    assert.ok(readdirSync(dir).includes(`${newest.path.slice(dir.length + 1)}.damaged`));
    assert.ok(lines.some((l) => l.includes(newest.path)), lines.join('\n'));
    await opened.close();
  }
});

test('a damaged only checkpoint refuses the start, naming the file, the offset and the part, and what repair says', async () => {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board);
  await submitBatches(opened, clock, 1, 3);
  await opened.close();
  const only = listCheckpoints(dir)[0]!;
  const layout = checkpointLayout(readFileSync(only.path));
  flip(only.path, layout.bodyStart + 10);
  await assert.rejects(openBoard(dir, new ManualClock(NOW), board), (error: unknown) => {
    assert.ok(error instanceof RestoreRefusedError, String(error));
    assert.ok(error.message.includes(`${only.path} at offset ${layout.bodyStart} (body)`), error.message);
    assert.match(error.message, /npm run repair/);
    assert.match(error.message, /cannot be rebuilt/);
    return true;
  });
});

test('damage in log records the checkpoint covers does not stop a start', async () => {
  const dir = await twoCheckpoints();
  const segments = listSegments(walDir(dir));
  const covered = segments.find((s, i) => segments[i + 1] !== undefined && segments[i + 1]!.firstIndex <= 9);
  assert.ok(covered !== undefined, 'a segment wholly before the newest checkpoint');
  flip(covered.path, SEGMENT_HEADER_BYTES + 2); // the first record's length
  flip(covered.path, SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + 5); // and a payload byte of it
  const opened = await openBoard(dir, new ManualClock(NOW), board);
  assert.equal(opened.durable.ingest.appliedIndex, 10);
  pricesAre(opened, 10);
  await opened.close();
});

test('one writer per DATA_DIR: a second open is refused naming this pid, so is npm run repair; closing releases the lock', async () => {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board);
  await assert.rejects(openBoard(dir, clock, board), (error: unknown) => error instanceof DataDirLockedError && error.holderPid === process.pid && error.message.includes(`in use by process ${process.pid}`));
  const repair = spawnSync('npm', ['run', '--silent', 'repair', '--', dir], { encoding: 'utf8' });
  assert.equal(repair.status, 1);
  assert.match(repair.stderr, new RegExp(`in use by process ${process.pid}`));
  await opened.close();
  const again = await openBoard(dir, clock, board);
  await again.close();
  const free = spawnSync('npm', ['run', '--silent', 'repair', '--', dir], { encoding: 'utf8' });
  assert.equal(free.status, 0, free.stdout + free.stderr);
  assert.match(free.stdout, /no damage/);
});
