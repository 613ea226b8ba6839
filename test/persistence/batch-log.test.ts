// The file batch log on real files: appends resolve in index order and share fsyncs
// (group commit), replay returns every durable record, a torn tail is cut and
// reported, a damaged record before the end stops the open with file and offset, and
// `npm run repair` truncates there after saying what it drops.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LogDamagedError } from '../../persistence/log/batchLog.ts';
import { crc32 } from '../../persistence/log/crc32.ts';
import { FileBatchLog, walDir } from '../../persistence/log/fileBatchLog.ts';
import { encodeFrame, encodeV1Frame, FRAME_HEADER_BYTES, listSegments, SEGMENT_HEADER_BYTES, segmentName } from '../../persistence/log/segments.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'batch-log-'));
  dirs.push(dir);
  return dir;
}
const payload = (n: number) => Buffer.from(`record ${n} `.repeat(1 + (n % 7)));

function replayAll(log: FileBatchLog, from = 1): { index: number; text: string }[] {
  const out: { index: number; text: string }[] = [];
  log.replay(from, ({ index, payload: bytes }) => out.push({ index, text: Buffer.from(bytes).toString() }));
  return out;
}

test('crc32 matches the IEEE check value', () => {
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  assert.equal(crc32(Buffer.from('The quick brown fox jumps over the lazy dog')), 0x414fa339);
});

test('appends resolve with consecutive indexes in order; one fsync covers appends made meanwhile; replay returns them all', async () => {
  const dir = dataDir();
  const { log, tornTail } = FileBatchLog.open(walDir(dir));
  assert.equal(tornTail, null);
  const resolved: number[] = [];
  const all = Array.from({ length: 200 }, (_, i) => log.append(payload(i + 1)).then((index) => (resolved.push(index), index)));
  assert.deepEqual(await Promise.all(all), Array.from({ length: 200 }, (_, i) => i + 1));
  assert.deepEqual(resolved, Array.from({ length: 200 }, (_, i) => i + 1), 'resolution order is index order');
  assert.equal(log.lastIndex, 200);
  assert.ok(log.groupsWritten < 200, `200 appends in ${log.groupsWritten} groups`);
  const replayed = replayAll(log);
  assert.equal(replayed.length, 200);
  replayed.forEach((r, i) => assert.equal(r.text, payload(i + 1).toString()));
  assert.deepEqual(replayAll(log, 150).map((r) => r.index)[0], 150);
  await log.close();
  const reopened = FileBatchLog.open(walDir(dir));
  assert.equal(reopened.log.lastIndex, 200);
  assert.equal(await reopened.log.append(payload(201)), 201);
  await reopened.log.close();
});

test('a torn record at the very end is cut and reported; the next append follows the last good record', async () => {
  for (const tear of ['header', 'payload', 'zeros', 'unwritten payload'] as const) {
    const dir = dataDir();
    const { log } = FileBatchLog.open(walDir(dir));
    for (let i = 1; i <= 3; i++) await log.append(payload(i));
    await log.close();
    const [segment] = listSegments(walDir(dir));
    const good = statSync(segment.path).size;
    const frame = encodeFrame(4, payload(4));
    if (tear === 'header') appendFileSync(segment.path, frame.subarray(0, 10));
    if (tear === 'payload') appendFileSync(segment.path, frame.subarray(0, frame.length - 3));
    if (tear === 'unwritten payload') {
      // what a power loss can leave: the file grew, the payload's pages were never written
      frame.fill(0, FRAME_HEADER_BYTES);
      appendFileSync(segment.path, frame);
    }
    if (tear === 'zeros') appendFileSync(segment.path, Buffer.alloc(4096));
    const opened = FileBatchLog.open(walDir(dir));
    assert.ok(opened.tornTail !== null, tear);
    assert.equal(opened.tornTail.file, segment.path);
    assert.equal(opened.tornTail.offset, good, tear);
    assert.ok(opened.tornTail.droppedBytes > 0);
    assert.equal(statSync(segment.path).size, good, `${tear}: the file is cut back`);
    assert.equal(opened.log.lastIndex, 3);
    assert.equal(await opened.log.append(payload(4)), 4);
    assert.deepEqual(replayAll(opened.log).map((r) => r.index), [1, 2, 3, 4]);
    await opened.log.close();
  }
});

test('the last record, whole but failing its CRC, is damage (it may have been acknowledged), not a torn tail', async () => {
  const dir = dataDir();
  const { log } = FileBatchLog.open(walDir(dir));
  for (let i = 1; i <= 3; i++) await log.append(payload(i));
  await log.close();
  const [segment] = listSegments(walDir(dir));
  const bytes = readFileSync(segment.path);
  bytes[bytes.length - 1] ^= 0x40;
  writeFileSync(segment.path, bytes);
  assert.throws(
    () => FileBatchLog.open(walDir(dir)),
    (error: unknown) => error instanceof LogDamagedError && error.index === 3 && /cannot be told apart/.test(error.message),
  );
  assert.equal(statSync(segment.path).size, bytes.length, 'nothing is cut');
});

test('a damaged length in the middle of the last segment is damage, not a torn tail; repair drops records only when the flag names the first one lost', async () => {
  const dir = dataDir();
  const { log } = FileBatchLog.open(walDir(dir), { segmentBytes: 200 });
  for (let i = 1; i <= 12; i++) await log.append(payload(i));
  await log.close();
  const segments = listSegments(walDir(dir));
  assert.ok(segments.length >= 3, `${segments.length} segments`);
  const victim = segments[1];
  const bytes = readFileSync(victim.path);
  const secondFrame = SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + bytes.readUInt32LE(SEGMENT_HEADER_BYTES);
  bytes[secondFrame + 1] ^= 0x01; // the length of the segment's second record: now past the end of the file
  writeFileSync(victim.path, bytes);
  assert.throws(
    () => FileBatchLog.open(walDir(dir)),
    (error: unknown) => error instanceof LogDamagedError && error.file === victim.path && error.offset === secondFrame && error.index === victim.firstIndex + 1 && /fails its CRC/.test(error.message),
  );

  const refused = spawnSync('npm', ['run', '--silent', 'repair', '--', dir], { encoding: 'utf8' });
  assert.equal(refused.status, 1, refused.stdout + refused.stderr);
  assert.match(refused.stdout, new RegExp(`--drop-from-record=${victim.firstIndex + 1}`));
  assert.ok(readFileSync(victim.path).equals(bytes) && listSegments(walDir(dir)).length === segments.length, 'nothing changed without the flag');
  const wrong = spawnSync('npm', ['run', '--silent', 'repair', '--', dir, `--drop-from-record=${victim.firstIndex + 2}`], { encoding: 'utf8' });
  assert.equal(wrong.status, 1);
  assert.match(wrong.stdout, /does not name the first record lost/);
  const output = execFileSync('npm', ['run', '--silent', 'repair', '--', dir, `--drop-from-record=${victim.firstIndex + 1}`], { encoding: 'utf8' });
  assert.match(output, new RegExp(`cut ${victim.path} at offset ${secondFrame}`));
  assert.match(output, /later segment/);
  assert.match(output, /LOST/);
  const repaired = FileBatchLog.open(walDir(dir));
  assert.equal(repaired.tornTail, null);
  assert.equal(repaired.log.lastIndex, victim.firstIndex);
  assert.deepEqual(replayAll(repaired.log).map((r) => r.index), Array.from({ length: victim.firstIndex }, (_, i) => i + 1));
  await repaired.log.close();
  assert.match(execFileSync('npm', ['run', '--silent', 'repair', '--', dir], { encoding: 'utf8' }), /no damage/);
});

test('a format 1 log (an earlier build) is read, and appends go on in a new format 2 segment', async () => {
  const dir = dataDir();
  mkdirSync(walDir(dir), { recursive: true });
  writeFileSync(join(walDir(dir), segmentName(1)), Buffer.concat([1, 2, 3].map((i) => encodeV1Frame(i, payload(i)))));
  const { log, tornTail } = FileBatchLog.open(walDir(dir));
  assert.equal(tornTail, null);
  assert.equal(log.lastIndex, 3);
  assert.equal(await log.append(payload(4)), 4);
  await log.close();
  assert.deepEqual(listSegments(walDir(dir)).map((s) => s.firstIndex), [1, 4]);
  const reopened = FileBatchLog.open(walDir(dir));
  assert.deepEqual(replayAll(reopened.log).map((r) => r.text), [1, 2, 3, 4].map((i) => payload(i).toString()));
  await reopened.log.close();
});

test('a write that fails (file size limit: EFBIG) rejects the append and every one queued behind it; nothing of them is replayed', () => {
  const dir = dataDir();
  // a child with RLIMIT_FSIZE of 8 KiB: appends past it fail the way a full disk does
  const script = `
    import { FileBatchLog, walDir } from './persistence/log/fileBatchLog.ts';
    const { log } = FileBatchLog.open(walDir(${JSON.stringify(dir)}));
    const ok = [];
    for (let i = 0; i < 5; i++) ok.push(await log.append(Buffer.alloc(600, i)));
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => log.append(Buffer.alloc(600, i))));
    ok.push(...results.filter((r) => r.status === 'fulfilled').map((r) => r.value));
    const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason.code);
    const last = log.lastIndex;
    const later = await log.append(Buffer.alloc(10, 7)).then((i) => 'ok ' + i, (e) => e.code);
    console.log(JSON.stringify({ ok, failed, later, last }));
  `;
  const scriptPath = join(process.cwd(), `.batch-log-efbig-${process.pid}.ts`);
  writeFileSync(scriptPath, script);
  let output: string;
  try {
    output = execFileSync('bash', ['-c', `ulimit -f 8 && exec node --import tsx ${scriptPath}`], { encoding: 'utf8', cwd: process.cwd() });
  } finally {
    rmSync(scriptPath, { force: true });
  }
  const result = JSON.parse(output.trim().split('\n').pop()!) as { ok: number[]; failed: string[]; later: string; last: number };
  assert.ok(result.failed.length > 0, output);
  assert.ok(result.failed.every((code) => code === 'log_unavailable'));
  assert.deepEqual(result.ok, Array.from({ length: result.ok.length }, (_, i) => i + 1), 'only a prefix was acknowledged');
  assert.equal(result.last, result.ok.length);
  const reopened = FileBatchLog.open(walDir(dir));
  assert.equal(reopened.tornTail, null, 'the failed write was cut back at once');
  const indexes: number[] = [];
  reopened.log.replay(1, ({ index }) => indexes.push(index));
  assert.equal(result.later, `ok ${result.ok.length + 1}`, 'after a failed write is cut back, appends go on with the next index');
  assert.equal(reopened.log.lastIndex, result.ok.length + 1);
  assert.deepEqual(indexes.slice(0, result.ok.length), result.ok);
});

test('a log opened to replay at once replays the segments it checked, torn tail cut, as a plain open reads them; a second replay reads the files', async () => {
  const dir = dataDir();
  const { log } = FileBatchLog.open(walDir(dir), { segmentBytes: 300 });
  for (let i = 1; i <= 30; i++) await log.append(payload(i));
  await log.close();
  const segments = listSegments(walDir(dir));
  assert.ok(segments.length >= 3, `${segments.length} segments`);
  appendFileSync(segments.at(-1)!.path, encodeFrame(31, payload(31)).subarray(0, 20)); // a torn tail
  const kept = FileBatchLog.open(walDir(dir), { keepForReplay: true });
  assert.notEqual(kept.tornTail, null);
  const plain = FileBatchLog.open(walDir(dir));
  for (const from of [1, 7, 30]) {
    const expected = replayAll(plain.log, from);
    assert.deepEqual(expected.map((r) => r.index), Array.from({ length: 31 - from }, (_, i) => from + i));
    assert.deepEqual(replayAll(kept.log, from), expected);
  }
  await kept.log.close();
  await plain.log.close();
});
