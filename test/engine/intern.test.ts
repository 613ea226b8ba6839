import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StringPool } from '../../engine/intern.ts';

test('interning gives one stable id per distinct string', () => {
  fc.assert(
    fc.property(fc.array(fc.string(), { maxLength: 200 }), (words) => {
      const pool = new StringPool();
      const ids = words.map((w) => pool.intern(w));
      const distinct = new Set(words);
      assert.equal(pool.size, distinct.size);
      words.forEach((w, i) => {
        assert.equal(pool.intern(w), ids[i]);
        assert.equal(pool.lookup(w), ids[i]);
        assert.equal(pool.get(ids[i]), w);
        assert.equal(pool.json(ids[i]), JSON.stringify(w));
      });
    }),
  );
});

test('lookup of an unknown string does not grow the pool', () => {
  const pool = new StringPool();
  pool.intern('a');
  assert.equal(pool.lookup('b'), -1);
  assert.equal(pool.size, 1);
});

test('ranks order ids by the given comparison', () => {
  const pool = new StringPool();
  for (const w of ['b', 'a', 'c', 'a-b']) pool.intern(w);
  const rank = pool.ranks((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const byRank = ['b', 'a', 'c', 'a-b'].sort((x, y) => rank[pool.lookup(x)] - rank[pool.lookup(y)]);
  assert.deepEqual(byRank, ['a', 'a-b', 'b', 'c']);
});
