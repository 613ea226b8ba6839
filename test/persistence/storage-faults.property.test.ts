// The durability promise as a property (fast-check, seeded): a tiny durable board takes
// a random sequence of batches and checkpoints while one storage fault fires (a short
// write, ENOSPC, EIO or a crash at the Nth write, fsync, rename, truncate or unlink,
// under the log and the checkpoint writer alike), or one byte is flipped / one file
// cut at a structural offset after the process stopped; the restart restores exactly
// the acknowledged state or refuses naming a file, and repair loses nothing a
// checkpoint does not cover without its flag (fixtures/harness/durabilityHarness.ts). The
// soak runs the same cases by the hundred thousand: bench/durability-soak.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { runCase, type Case, type Outcome } from '../../fixtures/harness/durabilityHarness.ts';
import { caseArbitrary } from '../../fixtures/harness/durabilityCases.ts';

const RUNS = Number(process.env.FAULT_CASES ?? 1000);
const SEED = Number(process.env.FAULT_SEED ?? 20261127);

test(`${RUNS} seeded storage-fault cases: the acknowledged state exactly, or a refusal naming a file and a repair that drops nothing uncovered without its flag`, async () => {
  const counts = new Map<Outcome['kind'], number>();
  await fc.assert(
    fc.asyncProperty(caseArbitrary(), async (c: Case) => {
      const outcome = await runCase(c);
      counts.set(outcome.kind, (counts.get(outcome.kind) ?? 0) + 1);
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
  const summary = [...counts].map(([kind, n]) => `${kind}: ${n}`).join(', ');
  process.stdout.write(`# storage-fault cases: ${summary}\n`);
  // the cases reach the paths they are for (a generator that never reached a fault would prove nothing)
  assert.ok((counts.get('exact') ?? 0) > RUNS / 10, summary);
  assert.ok((counts.get('fault not reached') ?? 0) < RUNS / 2, summary);
  if (RUNS >= 500) {
    assert.ok((counts.get('refused, repair with flag') ?? 0) + (counts.get('exact after repair') ?? 0) > 0, summary);
    assert.ok((counts.get('crash: unacknowledged record present') ?? 0) > 0, summary);
  }
});
