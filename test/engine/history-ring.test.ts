import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HISTORY_CAPACITY, HistoryRings, NO_RING } from '../../engine/historyRing.ts';
import { createHistoryBuffer } from '../../engine/model.ts';

interface Entry {
  fs: number;
  ls: number;
  pa: number;
  dm: number;
  su: number;
}

function read(rings: HistoryRings, handle: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < rings.length(handle); i++) {
    out.push({ fs: rings.fs(handle, i), ls: rings.ls(handle, i), pa: rings.pa(handle, i), dm: rings.dm(handle, i), su: rings.su(handle, i) });
  }
  return out;
}

test('a ring keeps exactly the last 50 entries, oldest first, through promotions', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 180 }), fc.integer({ min: 1, max: 5 }), (appends, rowsInterleaved) => {
      const rings = new HistoryRings();
      const handles = new Array<number>(rowsInterleaved).fill(NO_RING);
      const models: Entry[][] = Array.from({ length: rowsInterleaved }, () => []);
      for (let n = 0; n < appends; n++) {
        const r = n % rowsInterleaved;
        const entry = { fs: 1000 + n, ls: 1000 + n, pa: n % 2 ? 100 + n : -100 - n, dm: n % 3 ? 0 : 1 + n / 100, su: n % 5 === 0 ? 1 : 0 };
        handles[r] = rings.append(handles[r], entry.fs, entry.ls, entry.pa, entry.dm, entry.su);
        models[r].push(entry);
      }
      for (let r = 0; r < rowsInterleaved; r++) {
        const expected = models[r].slice(-HISTORY_CAPACITY);
        assert.deepEqual(read(rings, handles[r]), expected);
        assert.ok(rings.length(handles[r]) <= HISTORY_CAPACITY);
      }
    }),
    { numRuns: 150 },
  );
});

test('touch refreshes only the newest entry ls', () => {
  const rings = new HistoryRings();
  let h = NO_RING;
  for (let i = 0; i < 60; i++) h = rings.append(h, i, i, -110, 0, 0);
  rings.touch(h, 999);
  const entries = read(rings, h);
  assert.equal(entries.length, 50);
  assert.equal(entries[0].fs, 10);
  assert.equal(entries[49].fs, 59);
  assert.equal(entries[49].ls, 999);
  assert.equal(entries[48].ls, 58);
});

test('assign keeps the last 50 of a longer buffer; freed rings are reused', () => {
  const rings = new HistoryRings();
  const buf = createHistoryBuffer(64);
  for (let i = 0; i < 60; i++) {
    buf.fs[i] = 100 + i + 0.7; // fractional seconds are floored
    buf.ls[i] = 100 + i + 0.9;
    buf.pa[i] = 150;
    buf.dm[i] = 0;
    buf.su[i] = i % 2;
  }
  buf.length = 60;
  const h = rings.assign(NO_RING, buf);
  const entries = read(rings, h);
  assert.equal(entries.length, 50);
  assert.equal(entries[0].fs, 110);
  assert.equal(entries[49].ls, 159);
  const out = createHistoryBuffer(64);
  assert.equal(rings.copyInto(h, out), 50);
  assert.equal(out.fs[0], 110);
  const before = rings.allocatedBytes();
  rings.free(h);
  const again = rings.assign(NO_RING, buf);
  assert.equal(rings.allocatedBytes(), before, 'no new slab for a reused ring');
  assert.equal(read(rings, again).length, 50);
  buf.length = 0;
  assert.equal(rings.assign(again, buf), NO_RING);
});

test('small histories take small rings', () => {
  const rings = new HistoryRings();
  const handles: number[] = [];
  for (let r = 0; r < 2000; r++) handles.push(rings.append(NO_RING, 1, 1, -110, 0, 0));
  const small = rings.allocatedBytes();
  for (let r = 0; r < 2000; r++) for (let i = 0; i < 20; i++) handles[r] = rings.append(handles[r], 2 + i, 2 + i, -120, 0, 0);
  assert.ok(small * 5 < rings.allocatedBytes(), `4-entry rings (${small} B) are much smaller than 50-entry rings (${rings.allocatedBytes()} B)`);
});
