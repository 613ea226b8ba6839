// DFS pick'em value against sharp-book fair value: the per-leg math and the
// Edge record. The books and the brute-force reference both build records here.

import { decimalToAmerican } from '../model.ts';
import type { EdgeRecord } from './records.ts';

/** 1 / (baseLegDecimal * dfsMultiplier): the probability a leg must hit for the pick'em payout to break even. */
export function breakevenProbability(baseLegDecimal: number, dfsMultiplier: number): number {
  return 1 / (baseLegDecimal * dfsMultiplier);
}

/** American price of a fair probability (what a no-vig book would hang). */
export function fairPriceAmerican(fairProbability: number): number {
  return decimalToAmerican(1 / fairProbability);
}

/** The parts of an edge record that are not group metadata (edge and fair price are derived). */
export type EdgeLegInput = Pick<
  EdgeRecord,
  'id' | 'source' | 'selection' | 'side' | 'line' | 'dfsMultiplier' | 'breakevenProbability' | 'fairProbability' | 'sharpBooks' | 'devig' | 'updated'
>;

/** The parts of an edge record its market group gives. */
export type EdgeGroupInput = Pick<EdgeRecord, 'eventId' | 'league' | 'market' | 'marketSubtype' | 'period' | 'playerId' | 'playerName' | 'eventStartTime'>;

export function edgeRecord(group: EdgeGroupInput, leg: EdgeLegInput): EdgeRecord {
  return {
    id: leg.id,
    eventId: group.eventId,
    league: group.league,
    source: leg.source,
    market: group.market,
    marketSubtype: group.marketSubtype,
    period: group.period,
    playerId: group.playerId,
    playerName: group.playerName,
    selection: leg.selection,
    side: leg.side,
    line: leg.line,
    dfsMultiplier: leg.dfsMultiplier,
    breakevenProbability: leg.breakevenProbability,
    fairProbability: leg.fairProbability,
    fairPriceAmerican: fairPriceAmerican(leg.fairProbability),
    edge: leg.fairProbability - leg.breakevenProbability,
    sharpBooks: leg.sharpBooks,
    devig: leg.devig,
    eventStartTime: group.eventStartTime,
    updated: leg.updated,
  };
}
