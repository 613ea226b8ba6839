// Cross-book arbitrage in one market group: the best non-suspended price per
// outcome across non-DFS books; an arb when the implied probabilities of those best
// prices sum below 1. Ties on price go to the smaller odds id (so, within one group,
// the alphabetically first sportsbook), which keeps legs deterministic.

import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import type { ArbitrageLeg, ArbitrageRecord } from './records.ts';
import { OUTCOME_COUNT, outcomeIndex, SIDE_NAMES } from './sides.ts';
import { isoMillis } from '../timeFormat.ts';

/** What the last evaluate found; reused between calls. */
export class ArbitrageScratch {
  /** Batch index of the best quote per outcome (-1: none). */
  readonly best = new Int32Array(3);
  outcomes = 0;
  impliedSum = 0;
  profit = 0;
  /** Latest update among the legs (epoch ms). */
  updated = 0;
}

/** Fills s with the group's best prices; true when they form an arbitrage. */
export function evaluateArbitrage(batch: QuoteBatch, outcomes: number, s: ArbitrageScratch): boolean {
  const n = OUTCOME_COUNT[outcomes];
  s.outcomes = outcomes;
  if (n === 0) return false;
  const best = s.best;
  best[0] = best[1] = best[2] = -1;
  const price = batch.priceDecimal;
  for (let i = 0; i < batch.length; i++) {
    if (batch.dfs[i] === 1 || batch.suspended[i] === 1) continue;
    const k = outcomeIndex(outcomes, batch.side[i]);
    if (k < 0) continue;
    const d = price[i];
    if (!(d > 1)) continue;
    const b = best[k];
    if (b < 0 || d > price[b] || (d === price[b] && batch.oddsId[i] < batch.oddsId[b])) best[k] = i;
  }
  let sum = 0;
  let updated = 0;
  for (let k = 0; k < n; k++) {
    const b = best[k];
    if (b < 0) return false;
    sum += 1 / price[b];
    if (batch.updated[b] > updated) updated = batch.updated[b];
  }
  s.impliedSum = sum;
  s.profit = 1 / sum - 1;
  s.updated = updated;
  return sum < 1;
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
