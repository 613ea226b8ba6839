// RankedSet against a plain sorted-array model: random upserts and deletes, then
// order, rank lookup, and filtered keyset pages walked to the end.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MATCH_ALL, RankedSet, type RankCursor, type RankFilter } from '../../engine/signals/rankedSet.ts';

interface Entry { id: string; score: number; league: string; eventId: string; tag: string }

const inOrder = (a: Entry, b: Entry): number => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const ids = fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `id-${String(i).padStart(2, '0')}`));
// few distinct scores so that ties (ordered by id) are common
const score = fc.oneof(fc.constantFrom(0, 0.01, 0.02, 0.05, 0.1), fc.double({ min: -1, max: 1, noNaN: true }));
const entry = fc.record({
  id: ids,
  score,
  league: fc.constantFrom('nba', 'nfl', 'epl'),
  eventId: fc.constantFrom('e1', 'e2', 'e3', 'e4'),
  tag: fc.constantFrom('two_way', 'three_way'),
});
const op = fc.oneof(
  { weight: 4, arbitrary: entry.map((e) => ({ kind: 'upsert' as const, e })) },
  { weight: 1, arbitrary: ids.map((id) => ({ kind: 'delete' as const, id })) },
);
const filter: fc.Arbitrary<RankFilter> = fc.record({
  leagues: fc.option(fc.subarray(['nba', 'nfl', 'epl'], { minLength: 1 }), { nil: null }),
  eventIds: fc.option(fc.subarray(['e1', 'e2', 'e3', 'e4'], { minLength: 1 }), { nil: null }),
  tags: fc.option(fc.subarray(['two_way', 'three_way'], { minLength: 1 }), { nil: null }),
  minScore: fc.oneof(fc.constant(-Infinity), score),
});

const matches = (e: Entry, f: RankFilter): boolean =>
  e.score >= f.minScore
  && (f.leagues === null || f.leagues.includes(e.league))
  && (f.eventIds === null || f.eventIds.includes(e.eventId))
  && (f.tags === null || f.tags.includes(e.tag));

test('property: RankedSet keeps (score desc, id asc) order, ranks and filtered keyset pages like a sorted array', () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 200 }), filter, fc.integer({ min: 1, max: 7 }), (ops, f, limit) => {
    const set = new RankedSet<Entry>();
    let model: Entry[] = [];
    for (const o of ops) {
      if (o.kind === 'upsert') {
        set.upsert(o.e.id, o.e.score, o.e, o.e.league, o.e.eventId, o.e.tag);
        model = model.filter((m) => m.id !== o.e.id);
        model.push(o.e);
      } else {
        assert.equal(set.delete(o.id), model.some((m) => m.id === o.id));
        model = model.filter((m) => m.id !== o.id);
      }
    }
    model.sort(inOrder);
    assert.equal(set.size, model.length);
    assert.deepEqual(set.idsInOrder(), model.map((m) => m.id));
    model.forEach((m, rank) => {
      assert.equal(set.rankOf(m.id), rank);
      assert.equal(set.get(m.id), m);
      assert.equal(set.scoreAt(rank), m.score);
    });
    // walk every filtered page to the end
    const expected = model.filter((m) => matches(m, f));
    const walked: Entry[] = [];
    let after: RankCursor | null = null;
    for (let guard = 0; guard <= expected.length + 1; guard++) {
      const page = set.page(f, after, limit);
      walked.push(...page.items);
      assert.ok(page.items.length <= limit);
      if (!page.hasMore) break;
      assert.equal(page.items.length, limit);
      after = page.last;
    }
    assert.deepEqual(walked, expected);
  }), { numRuns: 400 });
});

test('property: a cursor whose entry was deleted or moved still resumes at the right place', () => {
  fc.assert(fc.property(fc.uniqueArray(entry, { selector: (e) => e.id, minLength: 2, maxLength: 30 }), score, fc.nat(), (entries, cursorScore, pick) => {
    const set = new RankedSet<Entry>();
    for (const e of entries) set.upsert(e.id, e.score, e, e.league, e.eventId, e.tag);
    const cursorId = entries[pick % entries.length].id;
    set.delete(cursorId);
    const cursor = { score: cursorScore, id: cursorId };
    const expected = entries.filter((e) => e.id !== cursorId).sort(inOrder).filter((e) => inOrder(e, { ...e, ...cursor }) > 0);
    assert.deepEqual(set.page(MATCH_ALL, cursor, 1000).items, expected);
  }), { numRuns: 300 });
});

test('upsert with an unchanged score keeps the position; version bumps on every change; NaN is refused', () => {
  const set = new RankedSet<string>();
  set.upsert('a', 0.5, 'A1', 'nba', 'e1', 't');
  set.upsert('b', 0.5, 'B', 'nba', 'e1', 't');
  const v = set.version;
  set.upsert('a', 0.5, 'A2', 'nba', 'e1', 't');
  assert.ok(set.version > v);
  assert.deepEqual(set.idsInOrder(), ['a', 'b']);
  assert.equal(set.get('a'), 'A2');
  assert.throws(() => set.upsert('c', NaN, 'C', 'nba', 'e1', 't'), RangeError);
  assert.equal(set.delete('zz'), false);
  assert.equal(set.rankOf('zz'), -1);
});
