// The storage-fault soak: the cases of test/persistence/storage-faults.property.test.ts
// (fixtures/harness/durabilityCases.ts, durabilityHarness.ts) by the hundred thousand,
// each in process on a tiny board, one fault each. Stops by itself after CASES cases
// (default 100,000), after SOAK_MINUTES minutes or at SOAK_UNTIL (an ISO time),
// whichever comes first; prints the outcome counts every 10,000 cases and the first
// failures in full (each with its case, to replay it with FAULT_CASE='<json>').
//
// The faults come from the storage seam (persistence/log/storageFaults.ts) and from
// bytes damaged in files at rest, never from the disk: the cases' DATA_DIRs are on a
// RAM file system when there is one (/dev/shm; FAULT_SCRATCH=<dir> puts them
// elsewhere), where an fsync is real but syncs nothing to a device, and the seam's
// operations are done synchronously under FaultyStorage (FAULT_STORAGE=node runs them
// through node:fs's promises as the service does). What a real disk and a real crash
// do is storage-process.test.ts's.
//
// SOAK_WORKERS=N (default 1) runs the cases in N child processes, each taking every
// Nth block of 1,000 (the same cases as one process would run for the seed, split).
//   node --import tsx bench/durability-soak.ts [CASES] [SEED]
import { fork } from 'node:child_process';
import fc from 'fast-check';
import { caseArbitrary } from '../fixtures/harness/durabilityCases.ts';
import { runCase, type Case } from '../fixtures/harness/durabilityHarness.ts';

const total = Number(process.argv[2] ?? process.env.CASES ?? 100_000);
const seed = Number(process.argv[3] ?? process.env.SEED ?? Date.now() % 2 ** 31);
const minutes = Number(process.env.SOAK_MINUTES ?? 0);
const until = process.env.SOAK_UNTIL === undefined ? Infinity : Date.parse(process.env.SOAK_UNTIL);
if (Number.isNaN(until)) throw new Error(`SOAK_UNTIL=${process.env.SOAK_UNTIL} is not a time (an ISO time like 2026-11-27T20:25:00Z)`);
const deadline = Math.min(until, minutes > 0 ? Date.now() + minutes * 60_000 : Infinity);
const single = process.env.FAULT_CASE;
const workers = Math.max(1, Number(process.env.SOAK_WORKERS ?? 1));
/** In a worker: its number and the worker count (SOAK_SHARD=i/n). */
const shard = process.env.SOAK_SHARD?.split('/').map(Number) ?? null;
const BLOCK = 1000;

interface Progress {
  done: number;
  failures: number;
  counts: Record<string, number>;
  failureTexts: string[];
}

async function runShard(index: number, of: number, onProgress: (p: Progress) => void): Promise<Progress> {
  const progress: Progress = { done: 0, failures: 0, counts: {}, failureTexts: [] };
  outer: for (let from = index * BLOCK; from < total; from += of * BLOCK) {
    const cases: Case[] = single !== undefined ? [JSON.parse(single) as Case] : fc.sample(caseArbitrary(), { numRuns: Math.min(BLOCK, total - from), seed: seed + from });
    for (const c of cases) {
      try {
        const outcome = await runCase(c);
        progress.counts[outcome.kind] = (progress.counts[outcome.kind] ?? 0) + 1;
      } catch (error) {
        progress.failures++;
        if (progress.failureTexts.length < 5) progress.failureTexts.push((error as Error).stack ?? String(error));
      }
      progress.done++;
      if (progress.done % 100 === 0) onProgress(progress);
      if (Date.now() > deadline || single !== undefined) break outer;
    }
  }
  return progress;
}

const started = performance.now();
const line = (final: boolean, done: number, failures: number, counts: Record<string, number>) => {
  const seconds = (performance.now() - started) / 1000;
  const kinds = Object.entries(counts).map(([k, n]) => `${k}: ${n}`).join(', ');
  process.stdout.write(`${final ? 'done' : 'so far'}: ${done} cases, ${failures} failures, ${seconds.toFixed(0)} s, ${(done / seconds).toFixed(1)} cases/s (seed ${seed}, ${workers} worker(s)); ${kinds}\n`);
};

if (shard !== null) {
  // a worker: report to the parent, which prints; it ends with the parent
  process.on('disconnect', () => process.exit(0));
  const result = await runShard(shard[0]!, shard[1]!, (p) => process.send!({ type: 'progress', ...p }));
  process.send!({ type: 'done', ...result }, () => process.exit(0));
} else if (workers === 1 || single !== undefined) {
  let printed = 0;
  const result = await runShard(0, 1, (p) => {
    if (p.done - printed >= 10_000) {
      printed = p.done;
      line(false, p.done, p.failures, p.counts);
    }
  });
  result.failureTexts.forEach((text, i) => process.stdout.write(`FAILURE ${i + 1}: ${text}\n`));
  line(true, result.done, result.failures, result.counts);
  process.exit(result.failures > 0 ? 1 : 0);
} else {
  const latest: Progress[] = Array.from({ length: workers }, () => ({ done: 0, failures: 0, counts: {}, failureTexts: [] }));
  const sum = () => {
    const counts: Record<string, number> = {};
    let done = 0;
    let failures = 0;
    for (const p of latest) {
      done += p.done;
      failures += p.failures;
      for (const [k, n] of Object.entries(p.counts)) counts[k] = (counts[k] ?? 0) + n;
    }
    return { done, failures, counts };
  };
  let printed = 0;
  const shownOf = latest.map(() => 0);
  // stopped early (Ctrl-C, SIGTERM): the counts so far, then the workers end with the IPC channel
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      const s = sum();
      process.stdout.write(`stopped by ${signal} (counts as of the workers' last reports, every 100 cases)\n`);
      line(true, s.done, s.failures, s.counts);
      process.exit(s.failures > 0 ? 1 : 2);
    });
  }
  await Promise.all(
    latest.map(
      (_, i) =>
        new Promise<void>((resolve) => {
          const child = fork(new URL(import.meta.url).pathname, process.argv.slice(2), { env: { ...process.env, SOAK_SHARD: `${i}/${workers}`, SEED: String(seed), CASES: String(total) }, execArgv: process.execArgv });
          child.on('message', (message: Progress & { type: string }) => {
            latest[i] = message;
            const s = sum();
            // a failure is printed as soon as it is known, not at the end
            for (const text of message.failureTexts.slice(shownOf[i])) process.stdout.write(`FAILURE in worker ${i}: ${text}\n`);
            shownOf[i] = message.failureTexts.length;
            if (s.done - printed >= 10_000) {
              printed = s.done;
              line(false, s.done, s.failures, s.counts);
            }
          });
          child.on('exit', (code, signal) => {
            if (code !== 0) process.stdout.write(`worker ${i} exited with ${signal ?? code}\n`);
            resolve();
          });
        }),
    ),
  );
  const s = sum();
  line(true, s.done, s.failures, s.counts);
  process.exit(s.failures > 0 ? 1 : 0);
}
