// Properties of what the delivery thread sends: a delivery's body, sent as pieces of
// the ticks' buffers (tickEvents.ts, deliveryWorker.ts deliveryBody), is byte for byte
// the JSON of its events in order, whichever events of whichever ticks it takes, and
// its signature is the signature of those bytes; a line move's subscriptions found
// through the odds-id index (watchedOddsIds) are those anyMatches takes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { AlertEvent } from '../../alerts/alertEvent.ts';
import type { StoredEvent } from '../../alerts/alertEvent.ts';
import { deliveryBody } from '../../alerts/deliveryWorker.ts';
import { anyMatches, parseFilters, watchedOddsIds } from '../../alerts/filters.ts';
import { signatureHeader } from '../../alerts/signing.ts';
import { readTick, tickBuffer } from '../../alerts/tickEvents.ts';

const eventOf = (id: string, note: string): AlertEvent => ({ id, type: 'event.status_changed', createdAt: 0, data: { eventId: note, league: 'nba', from: 'scheduled', to: 'final' } });

test('a delivery body sent as pieces of its ticks is the JSON of its events in order, and signs as those bytes', () => {
  fc.assert(
    fc.property(
      // ticks of events whose text holds any characters (multi-byte, newlines and commas escaped or not)
      fc.array(fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
      fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
      fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
      (ticks, taken, readBack) => {
        const all: StoredEvent[] = [];
        let n = 0;
        for (const notes of ticks) {
          const bodies = notes.map((note) => JSON.stringify(eventOf(`evt_${n++}`, note)));
          const events = readTick(tickBuffer(bodies), new Float64Array(bodies.length));
          events.forEach((e, i) => assert.equal(e.body, bodies[i]));
          for (const e of events) all.push({ seq: all.length + 1, id: e.event.id, type: e.event.type, createdAt: 0, body: e.body, bytes: e.bytes });
        }
        // some events read back from SQLite (no bytes yet), a subset in outbox order taken
        const entries = all.filter((_, i) => taken[i % taken.length]).map((e, i) => (readBack[i % readBack.length] ? { ...e, bytes: undefined } : e));
        const pieces = deliveryBody('sub_1', 'sub_1:1-9', entries);
        const sent = Buffer.concat(pieces);
        const expected = `{"subscriptionId":"sub_1","deliveryId":"sub_1:1-9","events":[${entries.map((e) => e.body).join(',')}]}`;
        assert.equal(sent.toString('utf8'), expected);
        assert.deepEqual(JSON.parse(sent.toString('utf8')).events.map((e: AlertEvent) => e.id), entries.map((e) => e.id));
        assert.equal(signatureHeader('whsec_0123456789abcdef', pieces, 1_800_000_000), signatureHeader('whsec_0123456789abcdef', sent, 1_800_000_000));
        // the pieces are views, not copies: a batch of one tick's consecutive events is one piece between the head and the tail
        if (entries.length > 0 && entries.every((e) => e.bytes !== undefined && e.bytes.buffer === entries[0]!.bytes!.buffer) && entries.every((e, i) => i === 0 || e.seq === entries[i - 1]!.seq + 1)) {
          assert.equal(pieces.length, 3);
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('the odds-id index takes a line move for exactly the filters anyMatches takes it for', () => {
  const ids = ['a:pinnacle:ml:home', 'a:pinnacle:ml:away', 'b:fanduel:spread:home', 'c:draftkings:total:over'];
  const filter = fc.oneof(
    fc.subarray(ids, { minLength: 1 }).map((oddsIds) => ({ type: 'line_move', oddsIds })),
    fc.constant({ type: 'event_status' }),
    fc.constant({ type: 'arbitrage', minProfit: 0.01 }),
  );
  fc.assert(
    fc.property(fc.array(filter, { minLength: 1, maxLength: 4 }), fc.constantFrom(...ids, 'd:other:ml:home'), (raw, oddsId) => {
      const filters = parseFilters(raw);
      const event: AlertEvent = {
        id: 'evt_1',
        type: 'line.moved',
        createdAt: 0,
        data: { oddsId, eventId: 'a', league: 'nba', sportsbook: 'pinnacle', from: null, to: { priceAmerican: -110, priceDecimal: 1.91, dfsMultiplier: null, line: null, suspended: false, live: true }, updated: '2026-11-21T12:00:00.000Z' },
      };
      assert.equal(watchedOddsIds(filters).has(oddsId), anyMatches(filters, event));
    }),
    { numRuns: 300 },
  );
});
