// Property: the trader screens kept by the signal books (fair line, best prices and
// hold, +EV, middles, steam moves) equal the brute force recomputed from the rows (and,
// for steam, from each row's full price history) after every random tick: moves,
// suspensions, pulls and re-listings across moneylines, alternate spreads and totals
// and a three-way market, with sharp quotes ageing out of the staleness window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEVIG_METHODS, type DevigMethod } from '../../engine/signals/devig.ts';
import { decimalToAmerican, oddsId, type OddsInput } from '../../engine/model.ts';
import type { SteamRecord } from '../../engine/signals/screenRecords.ts';
import { row, rowJson, SignalBoard } from '../helpers/signals-harness.ts';
import { BOOKS, GROUPS, SHARP, STALENESS_MS } from '../helpers/screenGroups.ts';
import { referenceBestPrices, referenceFairLines, referenceMiddles, referencePositiveEv, referenceSteam } from '../helpers/screensBruteForce.ts';

const STEAM = { unit: 'points' as const, threshold: 2, windowMs: 4_000, keep: 10_000 };

interface Quote {
  group: number;
  book: number;
  side: number;
}

function inputOf(q: Quote, p: number, now: number): OddsInput {
  const g = GROUPS[q.group]!;
  const side = g.sides[q.side] as OddsInput['side'];
  return row({ sportsbook: BOOKS[q.book]!, side, market: g.market, line: g.lines[q.side]!, teamSide: side === 'HOME' || side === 'AWAY' ? side : 'NONE', priceAmerican: decimalToAmerican(1 / p), updated: now });
}

const implied = fc.double({ min: 0.08, max: 0.9, noNaN: true });
const quote = fc.record({ group: fc.integer({ min: 0, max: GROUPS.length - 1 }), book: fc.integer({ min: 0, max: BOOKS.length - 1 }), side: fc.integer({ min: 0, max: 2 }) })
  .map((q) => ({ ...q, side: q.side % GROUPS[q.group]!.sides.length }));
/** A tick: a new implied probability, or a step away from the current one (steam needs moves of a few points). */
/** Ticks land on the sharp books half the time, and on few groups, so rows move repeatedly within the steam window. */
const tickQuote = fc.record({ group: fc.constantFrom(0, 1, 4, 6), book: fc.constantFrom(0, 0, 1, 1, 2, 3, 4), side: fc.integer({ min: 0, max: 2 }) })
  .map((q) => ({ ...q, side: q.side % GROUPS[q.group]!.sides.length }));
const tick = fc.record({ quote: fc.oneof(quote, tickQuote, tickQuote), p: implied, step: fc.double({ min: -0.06, max: 0.06, noNaN: true }), relative: fc.boolean(), kind: fc.constantFrom('price', 'price', 'price', 'price', 'suspend', 'remove'), method: fc.constantFrom(...DEVIG_METHODS) });

test('property: fair lines, best prices, +EV, middles and steam equal the brute force after every tick', () => {
  let seen = { fair: 0, best: 0, ev: 0, middles: 0, steam: 0, stale: 0 };
  fc.assert(
    fc.property(fc.array(fc.tuple(quote, implied), { minLength: 6, maxLength: 40 }), fc.array(tick, { maxLength: 40 }), (start, ticks) => {
      const board = new SignalBoard({ sharpBooks: SHARP.map((b) => b.sportsbook), stalenessMs: STALENESS_MS }, { sharpBooks: SHARP, stalenessMs: STALENESS_MS, steam: STEAM });
      const moves: SteamRecord[] = [];
      board.books.steam.onMove = (m) => moves.push(m);
      const expectedMoves: SteamRecord[] = [];
      const histories = new Map<string, { t: number; price: number }[]>();
      const fired = new Map<string, Set<number>>();
      const sharp = new Set(SHARP.map((b) => b.sportsbook));
      /** The reference's price history: a usable price that differs from the last one is a change. */
      const record = (id: string) => {
        const r = board.rows().find((x) => oddsId(x) === id);
        const json = r === undefined ? undefined : rowJson(r);
        if (json === undefined || !sharp.has(json.sportsbook) || json.suspended || json.priceDecimal === undefined) return;
        const history = histories.get(id) ?? [];
        if (history.length === 0 || history[history.length - 1]!.price !== json.priceDecimal) history.push({ t: Date.parse(json.updated), price: json.priceDecimal });
        histories.set(id, history);
      };
      const check = (step: number, method: DevigMethod) => {
        const json = board.json();
        const source = board.source;
        const all = { leagues: null, eventIds: null };
        const fair = board.books.screens.fairLines({ ...all, devig: method }, board.now, 10_000, source);
        assert.deepEqual(fair, referenceFairLines(json, board.now, method, SHARP, STALENESS_MS), `fair lines (${method}) at step ${step}`);
        const best = board.books.screens.bestPrices({ ...all, maxHold: Infinity }, 10_000, source);
        assert.deepEqual(best, referenceBestPrices(json), `best prices at step ${step}`);
        // a low-hold screen: the brute force's records with the hold at most 0.05
        assert.deepEqual(board.books.screens.bestPrices({ ...all, maxHold: 0.05 }, 10_000, source), referenceBestPrices(json).filter((r) => r.hold <= 0.05), `best prices, max_hold 0.05, at step ${step}`);
        const ev = board.books.screens.positiveEv({ ...all, devig: method, minEv: -1, sportsbooks: null }, board.now, 10_000, source);
        assert.deepEqual(ev, referencePositiveEv(json, board.now, method, -1, SHARP, STALENESS_MS), `+EV (${method}) at step ${step}`);
        const retail = ['draftkings', 'fanduel'];
        assert.deepEqual(board.books.screens.positiveEv({ ...all, devig: method, minEv: 0.01, sportsbooks: retail }, board.now, 10_000, source), referencePositiveEv(json, board.now, method, 0.01, SHARP, STALENESS_MS, retail), `+EV filtered at step ${step}`);
        const middles = board.books.screens.middles({ ...all, minWidth: 0, maxCost: Infinity }, 10_000, source);
        assert.deepEqual(middles, referenceMiddles(json), `middles at step ${step}`);
        assert.deepEqual(board.books.screens.middles({ ...all, minWidth: 0, maxCost: 0.05 }, 10_000, source), referenceMiddles(json).filter((m) => m.worstCaseCost <= 0.05), `middles, max_cost 0.05, at step ${step}`);
        assert.deepEqual(moves, expectedMoves, `steam moves at step ${step}`);
        seen = { fair: seen.fair + fair.length, best: seen.best + best.length, ev: seen.ev + ev.filter((e) => e.ev > 0).length, middles: seen.middles + middles.filter((m) => m.worstCaseCost < 0.1).length, steam: seen.steam + moves.length, stale: seen.stale };
      };
      for (const [q, p] of start) {
        const input = inputOf(q, p, board.now);
        board.upsert(input);
        record(oddsId(input));
      }
      check(0, 'multiplicative');
      ticks.forEach((t, i) => {
        board.now += 1000;
        let input = inputOf(t.quote, t.p, board.now);
        const id = oddsId(input);
        const current = board.rows().find((r) => oddsId(r) === id);
        if (t.relative && current?.priceAmerican != null) {
          const p = Math.min(0.95, Math.max(0.05, 1 / rowJson(current).priceDecimal! + t.step));
          input = { ...input, priceAmerican: decimalToAmerican(1 / p) };
        }
        if (current === undefined) {
          board.upsert(input);
          record(id);
        } else if (t.kind === 'remove') {
          board.remove(id);
          histories.delete(id);
          fired.delete(id);
        } else {
          const fields = t.kind === 'suspend' ? { suspended: true, updated: board.now } : { priceAmerican: input.priceAmerican, suspended: false, updated: board.now };
          const before = histories.get(id) ?? [];
          board.change(id, fields, i % 2 === 0 ? 'priced' : 'changed');
          const after = rowJson(board.rows().find((r) => oddsId(r) === id)!);
          if (sharp.has(after.sportsbook)) {
            const firedOf = fired.get(id) ?? new Set<number>();
            fired.set(id, firedOf);
            const move = referenceSteam(after, before, firedOf, board.json(), STEAM);
            if (move !== null) {
              expectedMoves.push(move);
              seen.stale += move.staleBooks.length;
            }
          }
          record(id);
        }
        try { check(i + 1, t.method); } catch (e) { if (process.env.DEBUG_SCREENS) console.error(String((e as Error).message).slice(0, 3000)); throw e; }
      });
    }),
    { numRuns: 120, seed: 3434 },
  );
  // the generator reaches every case, or the property says little
  for (const [what, count] of Object.entries(seen)) assert.ok(count > 0, `some ${what} were generated (${count})`);
});
