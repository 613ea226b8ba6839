// The fast-check generator of storage-fault cases (durabilityHarness.ts): the test and
// the soak draw from the same one.
import fc from 'fast-check';
import type { AtRestPart, AtRestTarget, Case, Fault } from './durabilityHarness.ts';
import { STORAGE_OPS } from '../../persistence/log/storage.ts';

const SEGMENT_PARTS: AtRestPart[] = ['segment header', 'frame length', 'frame index', 'payload crc', 'header crc', 'payload'];
const CHECKPOINT_PARTS: AtRestPart[] = ['checkpoint magic', 'checkpoint header', 'checkpoint meta', 'checkpoint body', 'checkpoint trailer'];

const target = fc.constantFrom<AtRestTarget>('newest segment', 'older segment', 'newest checkpoint', 'older checkpoint');
const targetAndPart = target.chain((t) => fc.tuple(fc.constant(t), fc.constantFrom(...(t.endsWith('segment') ? SEGMENT_PARTS : CHECKPOINT_PARTS))));

const fault: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('io' as const), op: fc.constantFrom(...STORAGE_OPS), nth: fc.integer({ min: 1, max: 10 }), kind: fc.constantFrom('short' as const, 'ENOSPC' as const, 'EIO' as const, 'crash' as const) }) },
  { weight: 2, arbitrary: fc.tuple(targetAndPart, fc.nat(), fc.integer({ min: 1, max: 255 })).map(([[t, part], pick, mask]): Fault => ({ type: 'flip', target: t, part, pick, mask })) },
  { weight: 1, arbitrary: fc.tuple(targetAndPart, fc.nat()).map(([[t, part], pick]): Fault => ({ type: 'cut', target: t, part, pick })) },
);

export function caseArbitrary(): fc.Arbitrary<Case> {
  return fc.record({
    seed: fc.integer(),
    batches: fc.integer({ min: 2, max: 12 }),
    checkpointAfter: fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { maxLength: 4 }),
    fault,
  });
}
