// SIGKILL while ingesting at full speed: a child process submits batches through
// Ingest (4 in flight, checkpoints happening as it goes) and prints each acknowledged
// batch; it is killed at a random moment. The restored board holds every acknowledged
// batch with its prices (in the history rings too) and no batch half applied, and its
// seq continues from the acknowledged ones.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { batchOf, crashPrice, crashRows, CRASH_ROWS } from './crashRows.ts';
import { openBoard, tempDataDir } from './ingest-helpers.ts';

async function runAndKill(dir: string, killAfterAcks: number): Promise<{ acks: Map<number, number>; baseSeq: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/ingest/crashChild.ts', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acks = new Map<number, number>();
  let baseSeq = -1;
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
        if (word === 'ready') baseSeq = Number(a);
        if (word === 'ack') acks.set(Number(a), Number(b));
        if (acks.size >= killAfterAcks && !child.killed) child.kill('SIGKILL');
      }
    });
  });
  return { acks, baseSeq };
}

test('SIGKILL of a process ingesting at full speed: every acknowledged batch is there, none is half applied', async () => {
  const dir = tempDataDir('ingest-crash-');
  try {
    const board = testBoard('small');
    for (let round = 0; round < 2; round++) {
      const { acks, baseSeq } = await runAndKill(dir, 300 + Math.floor(Math.random() * 1500));
      assert.ok(acks.size > 0);
      const maxAcked = Math.max(...acks.keys());
      const opened = await openBoard(dir, new ManualClock(NOW), board);
      try {
        const engine = opened.durable.engine;
        const ids = crashRows(engine);
        assert.equal(ids.length, CRASH_ROWS);
        const applied = ids.map((id, r) => batchOf(engine.store.priceAmerican[engine.slotOf(id)], r));
        const m = applied[0];
        assert.ok(applied.every((n) => n === m), `rows show different batches: ${applied.join(', ')} (a batch half applied)`);
        assert.ok(m >= maxAcked, `the board shows batch ${m}, but ${maxAcked} was acknowledged`);
        // every price change is a seq: the seq after batch m follows from any acknowledged one
        const [n, seq] = [maxAcked, acks.get(maxAcked)!];
        assert.equal(engine.seq, seq + (m - n) * CRASH_ROWS);
        // batches apply in submission order, one seq per price change
        for (const [batch, ackedSeq] of acks) assert.equal(ackedSeq, baseSeq + batch * CRASH_ROWS, `batch ${batch}`);
        // the history ring holds the last 50 batches' prices of every row, in order
        for (let r = 0; r < CRASH_ROWS; r++) {
          const history = [...engine.history(engine.slotOf(ids[r]))].map((e) => e.pa);
          const tail = history.slice(-Math.min(50, m)).map((pa) => batchOf(pa!, r));
          assert.deepEqual(tail, Array.from({ length: tail.length }, (_, i) => m - tail.length + 1 + i), `row ${r} history`);
        }
      } finally {
        await opened.close();
      }
      // round 2 restarts the child on round 1's DATA_DIR (a restored board, not a fresh one); it numbers its batches from 1 again
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
