// The storage-fault soak: the cases of test/persistence/storage-faults.property.test.ts
// (fixtures/harness/durabilityCases.ts, durabilityHarness.ts) by the hundred thousand,
// each in process on a tiny board, one fault each. Stops by itself after CASES cases
// (default 100,000) or SOAK_MINUTES (default none), prints the outcome counts every
// 10,000 cases and the first failures in full (each with its case, to replay it with
// FAULT_CASE='<json>').
//   node --import tsx bench/durability-soak.ts [CASES] [SEED]
import fc from 'fast-check';
import { caseArbitrary } from '../fixtures/harness/durabilityCases.ts';
import { runCase, type Case } from '../fixtures/harness/durabilityHarness.ts';

const total = Number(process.argv[2] ?? process.env.CASES ?? 100_000);
const seed = Number(process.argv[3] ?? process.env.SEED ?? Date.now() % 2 ** 31);
const minutes = Number(process.env.SOAK_MINUTES ?? 0);
const deadline = minutes > 0 ? Date.now() + minutes * 60_000 : Infinity;
const single = process.env.FAULT_CASE;

const counts = new Map<string, number>();
let failures = 0;
let done = 0;
const started = performance.now();
const report = (final: boolean) => {
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${final ? 'done' : 'so far'}: ${done} cases, ${failures} failures, ${seconds.toFixed(0)} s (seed ${seed}); ${[...counts].map(([k, n]) => `${k}: ${n}`).join(', ')}\n`);
};
const batch = 1000;
outer: for (let from = 0; from < total; from += batch) {
  const cases: Case[] = single !== undefined ? [JSON.parse(single) as Case] : fc.sample(caseArbitrary(), { numRuns: Math.min(batch, total - from), seed: seed + from });
  for (const c of cases) {
    try {
      const outcome = await runCase(c);
      counts.set(outcome.kind, (counts.get(outcome.kind) ?? 0) + 1);
    } catch (error) {
      failures++;
      if (failures <= 5) process.stdout.write(`FAILURE ${failures}: ${(error as Error).stack ?? String(error)}\n`);
    }
    done++;
    if (done % 10_000 === 0) report(false);
    if (Date.now() > deadline || single !== undefined) break outer;
  }
}
report(true);
process.exit(failures > 0 ? 1 : 0);
