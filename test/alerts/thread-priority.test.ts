// The webhook delivery thread runs ALERTS_THREAD_NICE (default 10) nice levels below
// the process, as the kernel reports it (/proc/self/task/<tid>/stat, the nice field),
// and it alone: the main thread and every other thread (libuv's pool, where the batch
// log's fdatasyncs run; V8's helpers) keep the process's priority. ALERTS_THREAD_NICE=0
// leaves every thread at the process's.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { test } from 'node:test';
import { startTestApp } from '../helpers/app.ts';

const skip = process.platform !== 'linux' && 'thread priorities are set and read per thread on Linux only';

/** Every thread of this process and its nice value, from the kernel. */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    } catch {
      continue; // the thread ended meanwhile
    }
    // after "pid (comm) ": field 3 (state) onwards; nice is field 19
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

test('the delivery thread runs 10 nice levels below the process, and no other thread does', { skip }, async () => {
  const base = getPriority();
  const expected = Math.min(19, base + 10);
  const t = await startTestApp({ dataDir: true, env: { ALERTS_TICK_MS: '20' } });
  try {
    const stats = await t.app.alerts!.stats();
    assert.equal(stats.nice, expected, 'the thread reports the nice value it set');
    const nices = threadNices();
    assert.equal(nices.get(process.pid), base, 'the main thread keeps the process priority');
    if (expected !== base) {
      const lowered = [...nices].filter(([, nice]) => nice === expected);
      assert.equal(lowered.length, 1, `one thread at nice ${expected}: ${JSON.stringify([...nices])}`);
      const others = [...nices].filter(([, nice]) => nice !== expected && nice !== base);
      assert.deepEqual(others, [], 'every other thread at the process priority');
    }
  } finally {
    await t.close();
  }
});

test('ALERTS_THREAD_NICE=0 leaves the delivery thread at the process priority', { skip }, async () => {
  const base = getPriority();
  const t = await startTestApp({ dataDir: true, env: { ALERTS_TICK_MS: '20', ALERTS_THREAD_NICE: '0' } });
  try {
    const stats = await t.app.alerts!.stats();
    assert.equal(stats.nice, null);
    const nices = threadNices();
    assert.deepEqual([...nices].filter(([, nice]) => nice !== base), [], 'every thread at the process priority');
  } finally {
    await t.close();
  }
});
