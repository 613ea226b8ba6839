// The webhook delivery thread runs ALERTS_THREAD_NICE nice levels below
// the process, as the kernel reports it (/proc/self/task/<tid>/stat, the nice field),
// and no thread takes its priority from it: the main thread and the others (libuv's
// pool, where the batch log's fdatasyncs run; V8's helpers) keep the process's, apart
// from the snapshot's compression workers, which set their own. ALERTS_THREAD_NICE=0
// (the default) leaves the delivery thread at the process's.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { test } from 'node:test';
import { WORKER_NICE } from '../../engine/snapshot/compressionWorkers.ts';
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

test('ALERTS_THREAD_NICE=10: the delivery thread runs 10 nice levels below the process; the main thread and the thread pool keep its priority', { skip }, async () => {
  const base = getPriority();
  const expected = Math.min(19, base + 10);
  const t = await startTestApp({ dataDir: true, env: { ALERTS_TICK_MS: '20', ALERTS_THREAD_NICE: '10' } });
  try {
    const stats = await t.app.alerts!.stats();
    assert.equal(stats.nice, expected, 'the thread reports the nice value it set');
    assert.ok(stats.tid !== null && stats.tid !== process.pid, `a thread of its own: ${stats.tid}`);
    const nices = threadNices();
    assert.equal(nices.get(stats.tid), expected, 'the kernel has the delivery thread at the lowered priority');
    assert.equal(nices.get(process.pid), base, 'the main thread keeps the process priority');
    // the others: the process's priority, or the snapshot's compression workers' own (engine/snapshot/compressionWorkers.ts)
    const others = [...nices].filter(([tid, nice]) => tid !== stats.tid && nice !== base && nice !== WORKER_NICE);
    assert.deepEqual(others, [], 'no other thread took the delivery thread priority (libuv pool, V8 helpers)');
  } finally {
    await t.close();
  }
});

test('by default (ALERTS_THREAD_NICE=0) the delivery thread runs at the process priority', { skip }, async () => {
  const base = getPriority();
  const t = await startTestApp({ dataDir: true, env: { ALERTS_TICK_MS: '20' } });
  try {
    const stats = await t.app.alerts!.stats();
    assert.equal(stats.nice, null);
    assert.ok(stats.tid !== null);
    assert.equal(threadNices().get(stats.tid), base);
  } finally {
    await t.close();
  }
});
