// isoMillis's cache of recent instants never changes an answer: for any sequence
// of instants (colliding slots, repeats, fractions, negatives) it equals toISOString.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isoMillis } from '../../engine/timeFormat.ts';

test('property: isoMillis equals Date.toISOString for any sequence of instants', () => {
  const instant = fc.oneof(
    fc.integer({ min: -8.64e15, max: 8.64e15 }),
    fc.integer({ min: 1_763_726_400_000, max: 1_763_726_400_000 + 2048 }), // dense: slot collisions and repeats
    fc.double({ min: -1e13, max: 1e13, noNaN: true }),
  );
  fc.assert(
    fc.property(fc.array(instant, { minLength: 1, maxLength: 200 }), (times) => {
      for (const ms of [...times, ...times]) assert.equal(isoMillis(ms), new Date(ms).toISOString());
    }),
    { numRuns: 300 },
  );
});
