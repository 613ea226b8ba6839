// The incremental books against the brute-force reference: a small random board takes
// random ticks (price moves, suspensions, DFS multiplier changes, rows pulled and
// re-listed, the clock moving past staleness windows) and after every tick the
// arbitrage book and the edge book (all devig methods) must equal a full recompute.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decimalToAmerican, oddsId, type OddsInput } from '../../engine/model.ts';
import { bruteForceArbitrage, bruteForceEdges, bruteForceFlagged } from '../helpers/bruteForce.ts';
import { DEVIG_METHODS } from '../../engine/signals/devig.ts';
import { NOW, row, SignalBoard } from '../helpers/signals-harness.ts';
import { mulberry32 } from '../../engine/random.ts';

const SHARP = ['pinnacle', 'circa', 'bookmaker'];
const RETAIL = ['draftkings', 'fanduel', 'betmgm'];
const DFS = ['prizepicks', 'underdog'];


interface Template { row: OddsInput; fair: number; margin: number }

/** Every row the board may ever hold, with its outcome's latent probability. */
function templates(rand: () => number): Template[] {
  const out: Template[] = [];
  const margin = (book: string) => (SHARP.includes(book) ? 0.02 + 0.01 * rand() : 0.04 + 0.04 * rand());
  const twoWay = (fields: Partial<OddsInput>, sides: ['HOME', 'AWAY'] | ['OVER', 'UNDER'], lines: [number | null, number | null], books: string[]) => {
    const p = 0.35 + 0.3 * rand();
    for (const book of books) {
      const m = margin(book);
      out.push({ row: row({ sportsbook: book, side: sides[0], line: lines[0], ...fields }), fair: p, margin: m });
      out.push({ row: row({ sportsbook: book, side: sides[1], line: lines[1], ...fields }), fair: 1 - p, margin: m });
    }
  };
  const books = [...SHARP, ...RETAIL];
  for (const [eventId, league] of [['nba-e1', 'nba'], ['nhl-e2', 'nhl']]) {
    const at = { eventId, league };
    twoWay({ ...at, market: 'MONEYLINE' }, ['HOME', 'AWAY'], [null, null], books);
    for (const line of [3.5, 4.5]) twoWay({ ...at, market: 'SPREAD' }, ['HOME', 'AWAY'], [-line, line], books);
    for (const line of [220.5, 221.5]) twoWay({ ...at, market: 'TOTAL' }, ['OVER', 'UNDER'], [line, line], books);
    for (const teamSide of ['HOME', 'AWAY'] as const) twoWay({ ...at, market: 'TEAM_TOTAL', teamSide }, ['OVER', 'UNDER'], [110.5, 110.5], books);
    for (const playerId of [`${eventId}-p1`, `${eventId}-p2`]) {
      for (const line of [24.5, 25.5]) {
        const fields = { ...at, market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', playerId, teamSide: 'HOME' as const };
        twoWay(fields, ['OVER', 'UNDER'], [line, line], books);
        for (const source of DFS) for (const side of ['OVER', 'UNDER'] as const) {
          out.push({ row: row({ sportsbook: source, side, line, dfsMultiplier: 1, ...fields }), fair: 0, margin: 0 });
        }
      }
    }
  }
  const soccer = { eventId: 'epl-e3', league: 'epl', market: 'MONEYLINE_3_WAY' };
  const [h, d] = [0.3 + 0.2 * rand(), 0.2 + 0.1 * rand()];
  for (const book of books) {
    const m = margin(book);
    out.push({ row: row({ sportsbook: book, side: 'HOME', ...soccer }), fair: h, margin: m });
    out.push({ row: row({ sportsbook: book, side: 'DRAW', teamSide: 'NONE', ...soccer }), fair: d, margin: m });
    out.push({ row: row({ sportsbook: book, side: 'AWAY', ...soccer }), fair: 1 - h - d, margin: m });
  }
  const season = { eventId: 'nba-2026-futures', league: 'nba', marketScope: 'SEASON' as const, period: 'REG_SEASON' };
  for (const book of books) {
    for (const side of ['OVER', 'UNDER'] as const) {
      out.push({ row: row({ sportsbook: book, side, line: 2000.5, market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', playerId: 'nba-p9', teamSide: 'HOME', ...season }), fair: 0.5, margin: -0.1 });
    }
    out.push({ row: row({ sportsbook: book, side: 'YES', market: 'CATEGORICAL', marketSubtype: 'CHAMPIONSHIP_WINNER', teamSide: 'NONE', selectionId: 'FULL-YES-bos', ...season, period: 'FULL' }), fair: 0.2, margin: -0.5 });
  }
  return out;
}

/** A price for a template: its fair value with the book's margin and noise big enough to make arbs. */
function priced(t: Template, rand: () => number, now: number): OddsInput {
  if (t.row.dfsMultiplier !== null) return { ...t.row, dfsMultiplier: Math.round((0.85 + 0.45 * rand()) * 100) / 100, updated: now };
  const implied = Math.min(0.97, Math.max(0.03, t.fair * (1 + t.margin) + (rand() - 0.5) * 0.12));
  return { ...t.row, priceAmerican: decimalToAmerican(1 / implied), updated: now };
}

function assertBooksMatchReference(board: SignalBoard, step: number): number {
  const json = board.json();
  const config = board.books.config;
  const arbs = board.books.arbitrage.all();
  assert.deepEqual(arbs, bruteForceArbitrage(json), `arbitrage after step ${step}`);
  for (const arb of arbs) assert.equal(new Set(arb.legs.map((leg) => leg.sportsbook)).size, arb.legs.length, `${arb.id}: every leg on its own book`);
  assert.deepEqual(board.books.arbitrage.flaggedBooks().map((f) => `${f.groupId} ${f.sportsbook}`).sort(), bruteForceFlagged(json), `flagged books after step ${step}`);
  for (const devig of DEVIG_METHODS) {
    assert.deepEqual(board.books.edges.all(board.now, devig), bruteForceEdges(json, board.now, { devig, minEdge: 0, config }), `${devig} edges after step ${step}`);
  }
  return board.books.edges.all(board.now).length;
}

test('property: after every tick the incremental books equal the brute-force recompute', () => {
  let arbsSeen = 0;
  let edgesSeen = 0;
  fc.assert(fc.property(fc.integer(), (seed) => {
    const rand = mulberry32(seed);
    const all = templates(rand);
    const board = new SignalBoard();
    const byId = new Map(all.map((t) => [oddsId(t.row), t]));
    // list about 80% of the rows, with times spread over the last 15 minutes
    for (const t of all) if (rand() < 0.8) board.upsert(priced(t, rand, NOW - Math.floor(rand() * 15 * 60_000)));
    let peakEdges = assertBooksMatchReference(board, 0);
    const ids = [...byId.keys()];
    for (let step = 1; step <= 60; step++) {
      const id = ids[Math.floor(rand() * ids.length)];
      const t = byId.get(id)!;
      const roll = rand();
      const via = rand() < 0.5 ? 'priced' : 'changed';
      if (roll < 0.1) {
        board.now += Math.floor(rand() * 4 * 60_000);
      } else if (!board.has(id)) {
        board.upsert(priced(t, rand, board.now));
      } else if (roll < 0.55) {
        const next = priced(t, rand, board.now);
        board.change(id, { priceAmerican: next.priceAmerican, dfsMultiplier: next.dfsMultiplier, updated: board.now }, via);
      } else if (roll < 0.7) {
        board.change(id, { updated: board.now }, via); // same price seen again
      } else if (roll < 0.85) {
        const current = board.rows().find((r) => oddsId(r) === id)!;
        board.change(id, { suspended: !current.suspended, updated: board.now }, via);
      } else {
        board.remove(id);
      }
      peakEdges = Math.max(peakEdges, assertBooksMatchReference(board, step));
    }
    arbsSeen += board.books.arbitrage.size;
    edgesSeen += peakEdges; // edges seen at any tick: at the last tick most sharp quotes have gone stale
  }), { numRuns: 40 });
  // the property is only meaningful if the random boards actually produce signals
  assert.ok(arbsSeen > 20, `arbitrage records seen: ${arbsSeen}`);
  assert.ok(edgesSeen > 20, `edge records seen: ${edgesSeen}`);
});
