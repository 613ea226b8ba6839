// The response cache's approximate LRU (ResponseCache.get moves a hit key to the
// young end only when more than a quarter of the keys moved there since): bounded
// like the exact LRU, and a key touched (set or hit) fewer than capacity/2 distinct
// other keys ago is never evicted by count.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ResponseCache, newEntry } from '../../http/responseCache.ts';

type Op = { kind: 'set' | 'get'; key: number };

describe('ResponseCache approximate LRU', () => {
  it('keeps every key touched fewer than capacity/2 distinct keys ago; never exceeds capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8, max: 40 }),
        fc.array(fc.record({ kind: fc.constantFrom<'set' | 'get'>('set', 'get', 'get'), key: fc.nat({ max: 1000 }) }), { minLength: 50, maxLength: 600, size: 'max' }),
        (capacity, raw: Op[]) => {
          const ops = raw.map((op) => ({ ...op, key: op.key % (capacity * 2) }));
          const cache = new ResponseCache<string>(capacity, Number.MAX_SAFE_INTEGER);
          const entries = new Map<number, ReturnType<typeof newEntry<string>>>();
          const touches: number[] = [];
          for (const op of ops) {
            const name = `/api/v1/odds?k=${op.key}`;
            if (op.kind === 'set') {
              let entry = entries.get(op.key);
              if (entry === undefined) entries.set(op.key, (entry = newEntry(name, 1, Buffer.from(name))));
              // Setting a key to the entry it already holds changes nothing (not a touch).
              if (!cache.has(name)) touches.push(op.key);
              cache.set(name, entry);
            } else if (cache.get(name) !== undefined) {
              touches.push(op.key);
            }
            assert.ok(cache.size <= capacity);
            const recent = new Set<number>();
            for (let i = touches.length - 1; i >= 0 && recent.size < capacity / 2; i--) recent.add(touches[i]!);
            for (const key of recent) assert.ok(cache.has(`/api/v1/odds?k=${key}`), `key ${key} was evicted too early`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a hot key is served by one lookup: hits do not reorder it while it is young', () => {
    const cache = new ResponseCache<string>(1024);
    const hot = newEntry('hot', 1, Buffer.from('hot'));
    cache.set('hot', hot);
    for (let i = 0; i < 100; i++) cache.set(`k${i}`, newEntry(`k${i}`, 1, Buffer.from('x')));
    for (let i = 0; i < 1000; i++) assert.equal(cache.get('hot'), hot);
    for (let i = 100; i < 1124; i++) cache.set(`k${i}`, newEntry(`k${i}`, 1, Buffer.from('x')));
    assert.equal(cache.get('hot'), undefined, 'a key left untouched while 1024 others arrive is evicted');
  });
});
