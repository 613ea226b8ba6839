// Cross-book arbitrage in one market group: one quote per outcome, each on a different
// book, from non-suspended quotes of non-DFS books, chosen to make the implied
// probabilities' sum smallest; an arb when that sum is below 1. A book whose own
// prices sum below 1 (a negative margin on its own) is not an arbitrage but a data
// problem of that book: it is flagged (flaggedBooks on the group's records, and the
// book's list and metric), never a pair of legs on one book.
//
// The choice: each outcome's candidates are its best quote per book, and only the top
// three books per outcome can take part in the best assignment (the other outcomes
// hold at most two books, so one of the top three is always free and at least as
// good); the candidates are ranked by price desc, then odds id asc, and the
// assignments tried in that order, a later one winning only with a strictly smaller
// sum. So the legs are deterministic: with the best prices on different books they
// are exactly those (ties going to the smaller odds id, i.e. the alphabetically first
// sportsbook within one group), as before.

import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import type { ArbitrageLeg, ArbitrageRecord, FlaggedBook } from './records.ts';
import { OUTCOME_COUNT, outcomeIndex, SIDE_NAMES } from './sides.ts';
import { isoMillis } from '../timeFormat.ts';
import { grown } from '../columns.ts';

/** Candidates kept per outcome (see above: three suffice for three outcomes). */
const TOP = 3;

/** What the last evaluate found; reused between calls. */
export class ArbitrageScratch {
  /** Batch index of each leg of the best cross-book assignment (-1: none). */
  readonly best = new Int32Array(3);
  /** Batch index of the best quote per outcome over every book (-1: none): the tick path's per-outcome best. */
  readonly top = new Int32Array(3);
  outcomes = 0;
  impliedSum = 0;
  profit = 0;
  /** Latest update among the legs (epoch ms). */
  updated = 0;
  /** Books quoting a negative margin on their own in this group: SourceTable index and their own implied sum. */
  flaggedCount = 0;
  flaggedBook = new Int32Array(4);
  flaggedSum = new Float64Array(4);
  /** Per book met in the batch (in order of first quote), its best quote per outcome: [b * 3 + k] (-1: none). */
  bookIndex = new Int32Array(8);
  bookBest = new Int32Array(24);
  bookCount = 0;
  /** SourceTable index -> position in bookIndex (-1: not met); reset after each evaluation. */
  slotOfBook = new Int32Array(64).fill(-1);
  /** Candidates per outcome: [k * TOP + c] batch indices, candidateCount[k] of them. */
  readonly candidate = new Int32Array(3 * TOP);
  readonly candidateCount = new Int32Array(3);
}

/** True when quote i ranks before quote j on the same outcome: higher price, then smaller odds id. */
function ranksBefore(batch: QuoteBatch, i: number, j: number): boolean {
  const pi = batch.priceDecimal[i];
  const pj = batch.priceDecimal[j];
  return pi > pj || (pi === pj && batch.oddsId[i] < batch.oddsId[j]);
}

/**
 * Fills s with the group's legs (s.best), its best quote per outcome over every book
 * (s.top) and its flagged books; true when the legs form a cross-book arbitrage.
 */
export function evaluateArbitrage(batch: QuoteBatch, outcomes: number, s: ArbitrageScratch): boolean {
  const n = OUTCOME_COUNT[outcomes];
  s.outcomes = outcomes;
  s.flaggedCount = 0;
  const best = s.best;
  const top = s.top;
  best[0] = best[1] = best[2] = -1;
  top[0] = top[1] = top[2] = -1;
  if (n === 0) return false;
  // each book's best quote per outcome
  s.bookCount = 0;
  const price = batch.priceDecimal;
  for (let i = 0; i < batch.length; i++) {
    if (batch.dfs[i] === 1 || batch.suspended[i] === 1) continue;
    const k = outcomeIndex(outcomes, batch.side[i]);
    if (k < 0) continue;
    if (!(price[i] > 1)) continue;
    const book = batch.book[i];
    if (book >= s.slotOfBook.length) s.slotOfBook = grown(s.slotOfBook, book + 1, -1);
    let b = s.slotOfBook[book];
    if (b < 0) {
      b = s.bookCount++;
      if (b >= s.bookIndex.length) {
        s.bookIndex = grown(s.bookIndex, b + 1);
        s.bookBest = grown(s.bookBest, (b + 1) * 3);
      }
      s.slotOfBook[book] = b;
      s.bookIndex[b] = book;
      s.bookBest[b * 3] = s.bookBest[b * 3 + 1] = s.bookBest[b * 3 + 2] = -1;
    }
    const held = s.bookBest[b * 3 + k];
    if (held < 0 || ranksBefore(batch, i, held)) s.bookBest[b * 3 + k] = i;
    const t = top[k];
    if (t < 0 || ranksBefore(batch, i, t)) top[k] = i;
  }
  // candidates: the top books per outcome, in rank order; and the books that arb alone
  s.candidateCount[0] = s.candidateCount[1] = s.candidateCount[2] = 0;
  for (let b = 0; b < s.bookCount; b++) {
    let own = 0;
    for (let k = 0; k < n; k++) {
      const q = s.bookBest[b * 3 + k];
      if (q < 0) {
        own = Infinity;
        continue;
      }
      own += 1 / price[q];
      // insert q into outcome k's candidates (kept sorted, at most TOP)
      let c = s.candidateCount[k];
      const at = k * TOP;
      if (c === TOP && !ranksBefore(batch, q, s.candidate[at + TOP - 1])) continue;
      if (c < TOP) s.candidateCount[k] = c + 1;
      else c = TOP - 1;
      while (c > 0 && ranksBefore(batch, q, s.candidate[at + c - 1])) {
        s.candidate[at + c] = s.candidate[at + c - 1];
        c--;
      }
      s.candidate[at + c] = q;
    }
    if (own < 1) {
      const f = s.flaggedCount++;
      if (f >= s.flaggedBook.length) {
        s.flaggedBook = grown(s.flaggedBook, f + 1);
        s.flaggedSum = grown(s.flaggedSum, f + 1);
      }
      s.flaggedBook[f] = s.bookIndex[b];
      s.flaggedSum[f] = own;
    }
  }
  for (let b = 0; b < s.bookCount; b++) s.slotOfBook[s.bookIndex[b]] = -1;
  for (let k = 0; k < n; k++) if (s.candidateCount[k] === 0) return false;
  // the best assignment of candidates to outcomes, every leg on its own book
  let bestSum = Infinity;
  const c0 = s.candidateCount[0];
  const c1 = s.candidateCount[1];
  const c2 = n === 3 ? s.candidateCount[2] : 1;
  for (let a = 0; a < c0; a++) {
    const qa = s.candidate[a];
    for (let b = 0; b < c1; b++) {
      const qb = s.candidate[TOP + b];
      if (batch.book[qb] === batch.book[qa]) continue;
      for (let c = 0; c < c2; c++) {
        let sum = 1 / price[qa] + 1 / price[qb];
        let qc = -1;
        if (n === 3) {
          qc = s.candidate[2 * TOP + c];
          if (batch.book[qc] === batch.book[qa] || batch.book[qc] === batch.book[qb]) continue;
          sum += 1 / price[qc];
        }
        if (sum < bestSum) {
          bestSum = sum;
          best[0] = qa;
          best[1] = qb;
          best[2] = qc;
        }
      }
    }
  }
  if (bestSum === Infinity) return false;
  let updated = 0;
  for (let k = 0; k < n; k++) if (batch.updated[best[k]] > updated) updated = batch.updated[best[k]];
  s.impliedSum = bestSum;
  s.profit = 1 / bestSum - 1;
  s.updated = updated;
  return bestSum < 1;
}

/** The flagged books of what evaluateArbitrage found, by their own implied sum (lowest first), then id. */
export function flaggedBooksOf(batch: QuoteBatch, s: ArbitrageScratch): FlaggedBook[] {
  const out: FlaggedBook[] = [];
  for (let f = 0; f < s.flaggedCount; f++) out.push({ sportsbook: batch.sources.ids[s.flaggedBook[f]], impliedSum: s.flaggedSum[f] });
  out.sort((a, b) => a.impliedSum - b.impliedSum || (a.sportsbook < b.sportsbook ? -1 : a.sportsbook > b.sportsbook ? 1 : 0));
  return out;
}

/**
 * True when the record already describes what s found: same legs, prices and leg
 * times (legUpdated[at + k] holds leg k's update time in ms when the record was built).
 */
export function sameArbitrage(record: ArbitrageRecord, batch: QuoteBatch, s: ArbitrageScratch, legUpdated: Float64Array, at: number): boolean {
  if (record.impliedSum !== s.impliedSum) return false;
  const legs = record.legs;
  for (let k = 0; k < legs.length; k++) {
    const b = s.best[k];
    if (legs[k].oddsId !== batch.oddsId[b] || legs[k].priceDecimal !== batch.priceDecimal[b] || legUpdated[at + k] !== batch.updated[b]) return false;
  }
  return true;
}

/** Keeps the leg times of what s found, for sameArbitrage. */
export function keepLegTimes(batch: QuoteBatch, s: ArbitrageScratch, legUpdated: Float64Array, at: number): void {
  for (let k = 0; k < OUTCOME_COUNT[s.outcomes]; k++) legUpdated[at + k] = batch.updated[s.best[k]];
}

/** The Arbitrage record (as /arbitrage serves it) for what evaluateArbitrage found in group g. */
export function arbitrageRecord(groups: MarketGroups, g: number, batch: QuoteBatch, s: ArbitrageScratch): ArbitrageRecord {
  const n = OUTCOME_COUNT[s.outcomes];
  const legs: ArbitrageLeg[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const b = s.best[k];
    const d = batch.priceDecimal[b];
    legs[k] = {
      oddsId: batch.oddsId[b],
      sportsbook: batch.sources.ids[batch.book[b]],
      side: SIDE_NAMES[batch.side[b]],
      selection: batch.selection[b],
      priceAmerican: batch.priceAmerican[b],
      priceDecimal: d,
      stake: 1 / d / s.impliedSum,
      updated: isoMillis(batch.updated[b]),
    };
  }
  return {
    id: groups.id[g],
    type: n === 3 ? 'three_way' : 'two_way',
    eventId: groups.eventId[g],
    league: groups.league[g],
    market: groups.market[g],
    marketSubtype: groups.marketSubtype[g],
    period: groups.period[g],
    line: groups.lineOf(g),
    profit: s.profit,
    impliedSum: s.impliedSum,
    legs,
    eventStartTime: groups.eventStartTime[g],
    updated: isoMillis(s.updated),
    flaggedBooks: flaggedBooksOf(batch, s),
  };
}

/**
 * The record with leg k re-quoted by batch[i] (the same quote, still the best: only its
 * price or time moved), given the new implied sum and latest leg time. Field for field
 * what arbitrageRecord builds from a full evaluation of the same quotes.
 */
export function requotedRecord(record: ArbitrageRecord, k: number, batch: QuoteBatch, i: number, impliedSum: number, latest: number): ArbitrageRecord {
  const n = record.legs.length;
  const legs: ArbitrageLeg[] = new Array(n);
  for (let j = 0; j < n; j++) {
    const leg = record.legs[j];
    const d = j === k ? batch.priceDecimal[i] : leg.priceDecimal;
    legs[j] = {
      oddsId: leg.oddsId,
      sportsbook: leg.sportsbook,
      side: leg.side,
      selection: leg.selection,
      priceAmerican: j === k ? batch.priceAmerican[i] : leg.priceAmerican,
      priceDecimal: d,
      stake: 1 / d / impliedSum,
      updated: j === k ? isoMillis(batch.updated[i]) : leg.updated,
    };
  }
  return { ...record, profit: 1 / impliedSum - 1, impliedSum, legs, updated: isoMillis(latest) };
}
