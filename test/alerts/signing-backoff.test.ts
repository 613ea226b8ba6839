// Properties of the webhook signature and the retry schedule, for any input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_RETRY, retryDelay } from '../../alerts/backoff.ts';
import { signatureHeader, verifySignature } from '../../alerts/signing.ts';

test('a signature verifies with its secret over its exact body, and fails for any other secret, any changed byte or a stale time', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 16, maxLength: 64 }), fc.uint8Array({ maxLength: 512 }), fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }), fc.nat(), (secret, bytes, t, flip) => {
      const body = Buffer.from(bytes);
      const header = signatureHeader(secret, body, t);
      assert.ok(verifySignature(secret, body, header, t + 299));
      assert.ok(!verifySignature(`${secret}x`, body, header, t));
      assert.ok(!verifySignature(secret, body, header, t + 301));
      if (body.length > 0) {
        const changed = Buffer.from(body);
        changed[flip % changed.length] ^= 1 << (flip % 8);
        assert.ok(!verifySignature(secret, changed, header, t));
      }
    }),
    { numRuns: 200 },
  );
});

test('retry delays double from the base up to the cap, each within [half, all] of its step', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 80 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
      const step = Math.min(DEFAULT_RETRY.maxMs, DEFAULT_RETRY.baseMs * 2 ** (attempt - 1));
      const delay = retryDelay(DEFAULT_RETRY, attempt, () => r);
      assert.ok(delay >= Math.floor(step / 2) && delay <= step, `attempt ${attempt}: ${delay} for step ${step}`);
    }),
  );
  // the schedule reaches the 1 h cap, and 24 h hold a few dozen tries, not thousands
  let total = 0;
  let attempts = 0;
  while (total < DEFAULT_RETRY.retryForMs) total += retryDelay(DEFAULT_RETRY, ++attempts, () => 0.999);
  assert.ok(attempts > 20 && attempts < 40, `${attempts} attempts in 24 h`);
});
