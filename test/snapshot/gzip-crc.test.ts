// crc32Combine against zlib.crc32 of real concatenations, including a length past 2^32.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { crc32Combine } from '../../engine/snapshot/crc32Combine.ts';
import { CrcTree } from '../../engine/snapshot/crcTree.ts';
import { SnapshotGzipError } from '../../engine/snapshot/errors.ts';

const TWO_POW_32 = 2 ** 32;

test('crc32Combine of two parts equals zlib.crc32 of their concatenation', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 5000 }), (a, b) => {
      const whole = crc32(Buffer.concat([a, b]));
      assert.equal(crc32Combine(crc32(a), crc32(b), b.length), whole);
    }),
    { numRuns: 500 },
  );
});

test('folding many parts left to right equals the CRC of the whole', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 700 }), { maxLength: 30 }), (parts) => {
      let crc = 0;
      for (const part of parts) crc = crc32Combine(crc, crc32(part), part.length);
      assert.equal(crc, crc32(Buffer.concat(parts)));
    }),
    { numRuns: 200 },
  );
});

test('a known vector: "hello " + "world"', () => {
  const expected = crc32(Buffer.from('hello world'));
  assert.equal(crc32Combine(crc32(Buffer.from('hello ')), crc32(Buffer.from('world')), 5), expected);
  assert.equal(expected, 0x0d4a1185);
});

test('an empty second part leaves the first CRC unchanged', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 100 }), (a) => {
      assert.equal(crc32Combine(crc32(a), crc32(new Uint8Array(0)), 0), crc32(a));
    }),
  );
});

test('a second part longer than 2^32 bytes matches zlib.crc32 streamed over it', () => {
  const prefix = Buffer.from('{"updated":"2026-11-21T12:00:00.000Z"}');
  const zeros = Buffer.alloc(64 << 20);
  const length = TWO_POW_32 + 12_345;
  let crcOfZeros = 0;
  let crcOfWhole = crc32(prefix);
  for (let left = length; left > 0; left -= zeros.length) {
    const slice = zeros.subarray(0, Math.min(left, zeros.length));
    crcOfZeros = crc32(slice, crcOfZeros);
    crcOfWhole = crc32(slice, crcOfWhole);
  }
  assert.equal(crc32Combine(crc32(prefix), crcOfZeros, length), crcOfWhole);
});

test('lengths up to 2^53 compose: appending m then n bytes equals appending m + n', () => {
  fc.assert(
    fc.property(
      fc.nat({ max: 0xffffffff }),
      fc.nat({ max: 0xffffffff }),
      fc.nat({ max: 0xffffffff }),
      fc.maxSafeNat(),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (crcA, crcB, crcC, total, split) => {
        const m = Math.floor(total * split);
        const n = total - m;
        const twoSteps = crc32Combine(crc32Combine(crcA, crcB, m), crcC, n);
        // B shifted by n bytes too: combine is linear, so Z^n(Z^m(A) ^ B) ^ C = Z^(m+n)(A) ^ Z^n(B) ^ C.
        const oneStep = crc32Combine(crcA, crc32Combine(crcB, crcC, n), total);
        assert.equal(twoSteps, oneStep);
      },
    ),
    { numRuns: 300 },
  );
});

test('the largest safe length is accepted and 2^53 is not', () => {
  assert.equal(typeof crc32Combine(1, 2, Number.MAX_SAFE_INTEGER), 'number');
  assert.throws(() => crc32Combine(1, 2, 2 ** 53), (e: unknown) => e instanceof SnapshotGzipError && e.code === 'invalid_length');
});

test('bad CRCs and lengths are rejected with named codes', () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return e instanceof SnapshotGzipError ? e.code : 'other';
    }
    return 'none';
  };
  assert.equal(code(() => crc32Combine(-1, 0, 1)), 'invalid_crc');
  assert.equal(code(() => crc32Combine(0, TWO_POW_32, 1)), 'invalid_crc');
  assert.equal(code(() => crc32Combine(0.5, 0, 1)), 'invalid_crc');
  assert.equal(code(() => crc32Combine(0, 0, -1)), 'invalid_length');
  assert.equal(code(() => crc32Combine(0, 0, 1.5)), 'invalid_length');
  assert.equal(code(() => crc32Combine(0, 0, Number.NaN)), 'invalid_length');
});

test('CrcTree point updates agree with a rebuild and with zlib over the concatenation', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 40 }),
      fc.array(fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 200 })), { maxLength: 20 }),
      (initial, updates) => {
        const parts = initial.slice();
        const pieceOf = (bytes: Uint8Array) => ({ crc: crc32(bytes), rawLength: bytes.length });
        const tree = new CrcTree();
        tree.rebuild(parts.map(pieceOf));
        for (const [at, bytes] of updates) {
          const index = at % parts.length;
          parts[index] = bytes;
          tree.update(index, crc32(bytes), bytes.length);
        }
        const whole = Buffer.concat(parts);
        assert.equal(tree.totalCrc, crc32(whole));
        assert.equal(tree.totalLength, whole.length);
        const rebuilt = new CrcTree();
        rebuilt.rebuild(parts.map(pieceOf));
        assert.equal(rebuilt.totalCrc, tree.totalCrc);
      },
    ),
    { numRuns: 200 },
  );
});

test('CrcTree shrinks and grows across rebuilds, and is empty for no pieces', () => {
  const tree = new CrcTree();
  const big = Array.from({ length: 100 }, (_, i) => Buffer.from(`piece ${i};`));
  tree.rebuild(big.map((b) => ({ crc: crc32(b), rawLength: b.length })));
  assert.equal(tree.totalCrc, crc32(Buffer.concat(big)));
  tree.rebuild([]);
  assert.equal(tree.totalCrc, 0);
  assert.equal(tree.totalLength, 0);
  const small = big.slice(0, 3);
  tree.rebuild(small.map((b) => ({ crc: crc32(b), rawLength: b.length })));
  assert.equal(tree.totalCrc, crc32(Buffer.concat(small)));
});
