// PieceSet: keyed pieces between a head and a tail, comma-separated, that always
// gunzip to the JSON a from-scratch serialization would give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { PieceSet } from '../../engine/snapshot/pieceSet.ts';
import type { GzipMember } from '../../engine/snapshot/gzipMember.ts';
import { SnapshotGzipError } from '../../engine/snapshot/errors.ts';
import { mulberry32 } from '../helpers/engine-helpers.ts';

function text(member: GzipMember): string {
  return gunzipSync(Buffer.concat(member.chunks as Buffer[])).toString('utf8');
}

function headFor(updated: string, count: number): string {
  return `{"updated":"${updated}","syncToken":"${updated}","count":${count},"events":[`;
}

function eventsJson(ids: string[], price: number): string {
  return ids.map((id) => `{"id":"${id}","odds":[{"id":"${id}:pinnacle:MONEYLINE:FULL-HOME","priceAmerican":${price}}]}`).join(',');
}

test('an empty set gunzips to head + tail: valid JSON with no events', () => {
  const set = new PieceSet({ head: headFor('2026-11-21T12:00:00.000Z', 0), tail: ']}' });
  const body = JSON.parse(text(set.assemble()));
  assert.deepEqual(body, { updated: '2026-11-21T12:00:00.000Z', syncToken: '2026-11-21T12:00:00.000Z', count: 0, events: [] });
});

test('pieces are comma-joined in insertion order and the whole parses as the snapshot', () => {
  const set = new PieceSet({ tail: ']}' });
  set.set('p1', eventsJson(['a', 'b'], 110), ['a', 'b']);
  set.set('p2', eventsJson(['c'], -120), ['c']);
  set.set('p3', eventsJson(['d', 'e', 'f'], 150), ['d', 'e', 'f']);
  set.setHead(headFor('t1', 6));
  const body = JSON.parse(text(set.assemble()));
  assert.equal(body.count, 6);
  assert.deepEqual(
    body.events.map((e: { id: string }) => e.id),
    ['a', 'b', 'c', 'd', 'e', 'f'],
  );
  assert.deepEqual(set.keys(), ['p1', 'p2', 'p3']);
  assert.equal(set.pieceKeyOf('d'), 'p3');
  assert.deepEqual(set.membersOf('p1'), ['a', 'b']);
});

test('compareKeys keeps pieces sorted wherever they are added', () => {
  const set = new PieceSet({ head: '[', tail: ']', compareKeys: (a, b) => (a < b ? -1 : a > b ? 1 : 0) });
  for (const key of ['m', 'c', 'x', 'a', 'p']) set.set(key, `"${key}"`);
  assert.deepEqual(JSON.parse(text(set.assemble())), ['a', 'c', 'm', 'p', 'x']);
  set.remove('a');
  set.remove('x');
  set.set('b', '"b"');
  assert.deepEqual(JSON.parse(text(set.assemble())), ['b', 'c', 'm', 'p']);
});

test('removing the first, a middle, the last and the only piece keeps valid JSON', () => {
  const set = new PieceSet({ head: '[', tail: ']' });
  for (let i = 0; i < 5; i++) set.set(`k${i}`, String(i));
  assert.equal(set.remove('k0'), true);
  assert.deepEqual(JSON.parse(text(set.assemble())), [1, 2, 3, 4]);
  set.remove('k2');
  assert.deepEqual(JSON.parse(text(set.assemble())), [1, 3, 4]);
  set.remove('k4');
  assert.deepEqual(JSON.parse(text(set.assemble())), [1, 3]);
  set.remove('k1');
  assert.deepEqual(JSON.parse(text(set.assemble())), [3]);
  set.remove('k3');
  assert.deepEqual(JSON.parse(text(set.assemble())), []);
  assert.equal(set.remove('k3'), false);
  assert.equal(set.size, 0);
  set.set('again', '7');
  assert.deepEqual(JSON.parse(text(set.assemble())), [7]);
});

test('an unchanged set returns the cached member; set() touches only its own piece', () => {
  const set = new PieceSet({ head: headFor('t0', 3), tail: ']}' });
  set.set('p1', eventsJson(['a'], 100));
  set.set('p2', eventsJson(['b'], 100));
  set.set('p3', eventsJson(['c'], 100));
  const first = set.assemble();
  const version = set.version;
  assert.equal(set.assemble(), first);
  set.setHead(headFor('t0', 3)); // same bytes: nothing changes
  assert.equal(set.assemble(), first);
  assert.equal(set.version, version);

  set.set('p2', eventsJson(['b'], -135));
  const second = set.assemble();
  assert.notEqual(second, first);
  assert.ok(set.version > version);
  // [header, head, p1, ',', p2, ',', p3, tail, final block, trailer]: only p2 and the trailer differ.
  assert.equal(second.chunks.length, first.chunks.length);
  const changed = second.chunks.map((chunk, i) => chunk !== first.chunks[i]).flatMap((diff, i) => (diff ? [i] : []));
  assert.deepEqual(changed, [4, second.chunks.length - 1]);
  const body = JSON.parse(text(second));
  assert.equal(body.events[1].odds[0].priceAmerican, -135);
  assert.equal(body.events[0].odds[0].priceAmerican, 100);
});

test('a new head (every build) changes only the head chunk and the trailer', () => {
  const set = new PieceSet({ head: headFor('t0', 1), tail: ']}' });
  set.set('p', eventsJson(['a'], 100));
  const before = set.assemble();
  set.setHead(headFor('t1', 1));
  const after = set.assemble();
  const changed = after.chunks.map((chunk, i) => chunk !== before.chunks[i]).flatMap((diff, i) => (diff ? [i] : []));
  assert.deepEqual(changed, [1, after.chunks.length - 1]);
  assert.equal(JSON.parse(text(after)).updated, 't1');
});

test('member keys follow their piece: omitted keeps them, a new list replaces them, remove drops them', () => {
  const set = new PieceSet();
  set.set('p1', '1', ['a', 'b']);
  set.set('p1', '2');
  assert.deepEqual(set.membersOf('p1'), ['a', 'b']);
  set.set('p1', '3', ['b', 'c']);
  assert.equal(set.pieceKeyOf('a'), undefined);
  assert.equal(set.pieceKeyOf('c'), 'p1');
  set.set('p2', '4', ['b']); // b moves to p2
  assert.equal(set.pieceKeyOf('b'), 'p2');
  set.remove('p1');
  assert.equal(set.pieceKeyOf('b'), 'p2', 'removing p1 does not drop a member p2 has claimed');
  assert.equal(set.pieceKeyOf('c'), undefined);
  assert.equal(set.has('p1'), false);
  assert.equal(set.membersOf('p1'), undefined);
});

test('a bad level is rejected when the set is made', () => {
  assert.throws(() => new PieceSet({ level: 11 }), (e: unknown) => e instanceof SnapshotGzipError && e.code === 'invalid_level');
});

test('any sequence of set, remove and setHead gunzips to the JSON built from scratch', () => {
  const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g');
  const op = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), key, price: fc.integer({ min: -500, max: 500 }) }),
    fc.record({ kind: fc.constant('remove' as const), key }),
    fc.record({ kind: fc.constant('head' as const), updated: fc.string({ unit: 'grapheme-ascii', maxLength: 8 }) }),
    fc.record({ kind: fc.constant('assemble' as const) }),
  );
  fc.assert(
    fc.property(fc.boolean(), fc.array(op, { maxLength: 40 }), (sorted, ops) => {
      const compareKeys = sorted ? (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0) : undefined;
      const set = new PieceSet({ head: headFor('', 0), tail: ']}', compareKeys });
      const model = new Map<string, number>();
      let head = headFor('', 0);
      for (const o of ops) {
        if (o.kind === 'set') {
          set.set(o.key, eventsJson([o.key], o.price));
          model.set(o.key, o.price);
        } else if (o.kind === 'remove') {
          assert.equal(set.remove(o.key), model.delete(o.key));
        } else if (o.kind === 'head') {
          head = headFor(JSON.stringify(o.updated).slice(1, -1), model.size);
          set.setHead(head);
        } else {
          set.assemble();
        }
      }
      const keys = sorted ? [...model.keys()].sort() : [...model.keys()];
      const expected = head + keys.map((k) => eventsJson([k], model.get(k)!)).join(',') + ']}';
      assert.equal(text(set.assemble()), expected);
      JSON.parse(expected);
      assert.deepEqual(set.keys(), keys);
    }),
    { numRuns: 300 },
  );
});

test('setDeferred: pieces compressed (with their CRC) on the worker threads give the bytes set() gives on this thread', async () => {
  const rand = mulberry32(4);
  const here = new PieceSet({ head: '{"events":[', tail: ']}', compareKeys: (a, b) => (a < b ? -1 : a > b ? 1 : 0) });
  const there = new PieceSet({ head: '{"events":[', tail: ']}', compareKeys: (a, b) => (a < b ? -1 : a > b ? 1 : 0) });
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 40; i++) {
      const key = `k${String(Math.floor(rand() * 60)).padStart(3, '0')}`;
      const json = Array.from({ length: 1 + Math.floor(rand() * 400) }, (_, j) => JSON.stringify({ id: `${key}-${j}`, price: Math.floor(rand() * 1000) })).join(',');
      here.set(key, json);
      there.setDeferred(key, Buffer.from(json));
    }
    assert.ok(there.pendingCount > 0, 'compression runs off this thread');
    await there.settle();
    assert.equal(there.pendingCount, 0);
    const a = Buffer.concat(here.assemble().chunks as Buffer[]);
    const b = Buffer.concat(there.assemble().chunks as Buffer[]);
    assert.ok(a.equals(b), `round ${round}: the same member byte for byte`);
    assert.equal(there.assemble().crc, crc32(gunzipSync(b)));
  }
});
