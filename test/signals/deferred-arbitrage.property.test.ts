// Property: a tick the arbitrage fast paths cannot settle defers its group's re-read to
// the next read of the book (SignalBooks.deferArbitrage, settleArbitrage), so between
// two reads a group may take many ticks unread. Over random groups and ticks, read only
// now and then:
//   - each read equals the brute force of the board at that moment (records, flags);
//   - the version moves between two reads whose records differ;
//   - the flag counter (odds_arbitrage_flags_total) counts every time a book became
//     flagged in a group, tick by tick, as the brute force run after every tick counts
//     it, also when the flag came and went between two reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { oddsId, type OddsInput } from '../../engine/model.ts';
import { bruteForceArbitrage, bruteForceFlagged } from '../helpers/bruteForce.ts';
import { SignalBoard } from '../helpers/signals-harness.ts';
import { BOOKS, GROUPS, groupQuoteRow, implied, type GroupQuote } from '../helpers/arbitrageGroups.ts';

interface Quote extends GroupQuote {
  /** A second row of the same book and side (another selection label): a book's rows per outcome need not be one. */
  twin: boolean;
}

function inputOf(q: Quote, p: number, now: number): OddsInput {
  const input = groupQuoteRow(q, p, now);
  return q.twin ? { ...input, selectionId: `${input.selectionId}-alt`, selection: `${input.selection} (alt)` } : input;
}

const quote = fc
  .record({ group: fc.integer({ min: 0, max: 2 }), book: fc.integer({ min: 0, max: BOOKS.length - 1 }), side: fc.integer({ min: 0, max: 2 }), twin: fc.boolean() })
  .map((q) => ({ ...q, side: q.side % GROUPS[q.group].sides.length, twin: q.twin && q.book === 0 }));
const tick = fc.record({
  quote,
  p: implied,
  kind: fc.constantFrom('price', 'price', 'price', 'price', 'suspend', 'remove'),
  via: fc.constantFrom('priced', 'priced', 'priced', 'changed'),
  read: fc.integer({ min: 0, max: 5 }),
});

test('property: reads after deferred ticks equal the brute force; the flag counter counts every flag, read or not', () => {
  let deferred = 0;
  let events = 0;
  let unreadEvents = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(quote, implied), { minLength: 4, maxLength: 30 }), fc.array(tick, { maxLength: 60 }), (start, ticks) => {
      const board = new SignalBoard();
      // the brute force's flag count, after every change
      let flaggedNow = new Set<string>();
      let expectedEvents = 0;
      const count = () => {
        const flagged = new Set(bruteForceFlagged(board.json()));
        for (const f of flagged) if (!flaggedNow.has(f)) expectedEvents++;
        flaggedNow = flagged;
      };
      for (const [q, p] of start) {
        board.upsert(inputOf(q, p, board.now));
        count();
      }
      let lastRecords = JSON.stringify(board.books.arbitrage.all());
      let lastVersion = board.books.arbitrage.version;
      let eventsAtRead = expectedEvents;
      const read = (step: number) => {
        const json = board.json();
        const live = board.books.arbitrage.all();
        assert.deepEqual(live, bruteForceArbitrage(json), `records at step ${step}`);
        assert.deepEqual(board.books.arbitrage.flaggedBooks().map((f) => `${f.groupId} ${f.sportsbook}`).sort(), bruteForceFlagged(json), `flags at step ${step}`);
        assert.equal(board.books.arbitrage.flagEvents, expectedEvents, `flag events at step ${step}`);
        const records = JSON.stringify(live);
        const version = board.books.arbitrage.version;
        if (records !== lastRecords) assert.notEqual(version, lastVersion, `the version moves with the records (step ${step})`);
        lastRecords = records;
        lastVersion = version;
        if (expectedEvents - eventsAtRead > 1) unreadEvents++;
        eventsAtRead = expectedEvents;
      };
      read(0);
      ticks.forEach((t, i) => {
        board.now += 1000;
        const input = inputOf(t.quote, t.p, board.now);
        const id = oddsId(input);
        if (!board.has(id)) board.upsert(input);
        else if (t.kind === 'remove') board.remove(id);
        else if (t.kind === 'suspend') board.change(id, { suspended: true, updated: board.now }, t.via as 'priced' | 'changed');
        else board.change(id, { priceAmerican: input.priceAmerican, suspended: false, updated: board.now }, t.via as 'priced' | 'changed');
        deferred += board.books.deferredGroups;
        count();
        if (t.read === 0) read(i + 1);
      });
      read(ticks.length + 1);
      events += expectedEvents;
    }),
    { numRuns: 200, seed: 20261128 },
  );
  // the generator reaches the cases, or the property says little
  assert.ok(deferred > 0, 'some ticks were deferred to a read');
  assert.ok(events > 0, 'some book became flagged');
  assert.ok(unreadEvents > 0, 'some flags came between two reads more than once');
});
