// The reference: every arbitrage and every edge recomputed from scratch out of plain
// odds rows (the JSON objects /odds serves). Deliberately naive and written apart
// from the incremental books (own grouping, own best-price pick), sharing only the
// devig formulas and the record builders, so comparing the two checks the bookkeeping
// and the rules, not one piece of code against itself.

import { devig, type DevigMethod } from '../../engine/signals/devig.ts';
import { breakevenProbability, edgeRecord } from '../../engine/signals/edges.ts';
import { baseLegDecimalOf, signalsConfig, type ArbitrageRecord, type EdgeRecord, type SignalsConfig } from '../../engine/signals/records.ts';

/** An odds row as served (format all), optionally a delta-feed tombstone. */
export interface OddsRowJson {
  id: string;
  sportsbook: string;
  league: string;
  eventId: string;
  market: string;
  marketSubtype: string;
  period: string;
  selection: string;
  side: string;
  teamSide: string;
  teamName?: string;
  priceAmerican?: number;
  priceDecimal?: number;
  line?: number;
  dfsMultiplier?: number;
  playerId?: string;
  playerName?: string;
  suspended: boolean;
  eventStartTime: string;
  updated: string;
  marketScope?: string;
  segment?: string;
  removed?: boolean;
}

interface Group {
  id: string;
  line: number | null;
  outcomes: string[];
  rows: OddsRowJson[];
}

function outcomesOf(row: OddsRowJson): string[] {
  if (row.side === 'DRAW' || row.market.includes('3_WAY')) return ['HOME', 'DRAW', 'AWAY'];
  if (row.side === 'HOME' || row.side === 'AWAY') return ['HOME', 'AWAY'];
  if (row.side === 'OVER' || row.side === 'UNDER') return ['OVER', 'UNDER'];
  return [];
}

function groupsOf(rows: readonly OddsRowJson[]): Group[] {
  const groups = new Map<string, Group>();
  for (const row of rows) {
    if (row.removed || row.marketScope !== undefined) continue;
    const outcomes = outcomesOf(row);
    if (outcomes.length === 0) continue;
    let line: number | null = row.line ?? null;
    if (line !== null && row.side === 'AWAY') line = line === 0 ? 0 : -line;
    const lineKey = line === null ? 'none' : line < 0 ? `m${-line}` : `${line}`;
    const teamScoped = (row.side === 'OVER' || row.side === 'UNDER') && (row.teamSide === 'HOME' || row.teamSide === 'AWAY');
    const scope = row.playerId ?? (teamScoped ? row.teamSide : 'game');
    const id = [row.eventId, row.marketSubtype, row.period, lineKey, scope].join(':');
    let group = groups.get(id);
    if (group === undefined) {
      group = { id, line, outcomes, rows: [] };
      groups.set(id, group);
    }
    group.rows.push(row);
  }
  return [...groups.values()];
}

const isDfsRow = (row: OddsRowJson): boolean => row.dfsMultiplier !== undefined;
const ms = (iso: string): number => Date.parse(iso);
function byScore<T extends { id: string }>(score: (record: T) => number): (a: T, b: T) => number {
  return (a, b) => score(b) - score(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Every arbitrage on the board (profit > 0), sorted by profit desc, id asc: per group,
 * every way to take one quote per outcome with each leg on a different book, the
 * smallest implied sum winning (ties: the first in the order of offers sorted by price
 * desc, then id), and the books whose own best prices sum below 1 flagged.
 */
export function bruteForceArbitrage(rows: readonly OddsRowJson[]): ArbitrageRecord[] {
  const found: ArbitrageRecord[] = [];
  for (const group of groupsOf(rows)) {
    const offersOf: OddsRowJson[][] = group.outcomes.map((side) =>
      group.rows
        .filter((r) => r.side === side && !isDfsRow(r) && !r.suspended && (r.priceDecimal ?? 0) > 1)
        .sort((a, b) => b.priceDecimal! - a.priceDecimal! || (a.id < b.id ? -1 : 1)),
    );
    if (offersOf.some((offers) => offers.length === 0)) continue;
    let best: OddsRowJson[] | null = null;
    let bestSum = Infinity;
    const pick = (k: number, chosen: OddsRowJson[]) => {
      if (k === offersOf.length) {
        let sum = 0;
        for (const leg of chosen) sum += 1 / leg.priceDecimal!;
        if (sum < bestSum) {
          bestSum = sum;
          best = [...chosen];
        }
        return;
      }
      for (const offer of offersOf[k]) {
        if (chosen.some((leg) => leg.sportsbook === offer.sportsbook)) continue;
        chosen.push(offer);
        pick(k + 1, chosen);
        chosen.pop();
      }
    };
    pick(0, []);
    if (best === null || !(bestSum < 1)) continue;
    const legsChosen: OddsRowJson[] = best;
    const impliedSum = bestSum;
    // a book's own best price per outcome, summed: below 1 is a negative margin on its own
    const flaggedBooks: { sportsbook: string; impliedSum: number }[] = [];
    for (const book of new Set(offersOf.flat().map((r) => r.sportsbook))) {
      const own = offersOf.map((offers) => offers.find((r) => r.sportsbook === book));
      if (own.some((r) => r === undefined)) continue;
      let sum = 0;
      for (const r of own) sum += 1 / r!.priceDecimal!;
      if (sum < 1) flaggedBooks.push({ sportsbook: book, impliedSum: sum });
    }
    flaggedBooks.sort((a, b) => a.impliedSum - b.impliedSum || (a.sportsbook < b.sportsbook ? -1 : 1));
    const first = group.rows[0];
    found.push({
      id: group.id,
      type: legsChosen.length === 3 ? 'three_way' : 'two_way',
      eventId: first.eventId,
      league: first.league,
      market: first.market,
      marketSubtype: first.marketSubtype,
      period: first.period,
      line: group.line,
      profit: 1 / impliedSum - 1,
      impliedSum,
      legs: legsChosen.map((leg) => ({
        oddsId: leg.id,
        sportsbook: leg.sportsbook,
        side: leg.side,
        selection: leg.selection,
        priceAmerican: leg.priceAmerican!,
        priceDecimal: leg.priceDecimal!,
        stake: 1 / leg.priceDecimal! / impliedSum,
        updated: leg.updated,
      })),
      eventStartTime: first.eventStartTime,
      updated: new Date(Math.max(...legsChosen.map((leg) => ms(leg.updated)))).toISOString(),
      flaggedBooks,
    });
  }
  return found.sort(byScore((r: ArbitrageRecord) => r.profit));
}

/** Every book quoting a negative margin on its own, per group: `${groupId} ${sportsbook}`, sorted. */
export function bruteForceFlagged(rows: readonly OddsRowJson[]): string[] {
  const out: string[] = [];
  for (const group of groupsOf(rows)) {
    const usable = group.rows.filter((r) => !isDfsRow(r) && !r.suspended && (r.priceDecimal ?? 0) > 1);
    for (const book of new Set(usable.map((r) => r.sportsbook))) {
      let sum = 0;
      for (const side of group.outcomes) {
        const own = usable.filter((r) => r.sportsbook === book && r.side === side).sort((a, b) => b.priceDecimal! - a.priceDecimal!)[0];
        sum += own === undefined ? Infinity : 1 / own.priceDecimal!;
      }
      if (sum < 1) out.push(`${group.id} ${book}`);
    }
  }
  return out.sort();
}

export interface BruteForceEdgeOptions {
  config?: Partial<SignalsConfig>;
  devig?: DevigMethod;
  /** Default -Infinity: every DFS row that has a fair value. */
  minEdge?: number;
}

/** Every DFS edge at `now` (epoch ms), sorted by edge desc, id asc. */
export function bruteForceEdges(rows: readonly OddsRowJson[], now: number, options: BruteForceEdgeOptions = {}): EdgeRecord[] {
  const config = signalsConfig(options.config);
  const method = options.devig ?? 'multiplicative';
  const minEdge = options.minEdge ?? -Infinity;
  const found: EdgeRecord[] = [];
  for (const group of groupsOf(rows)) {
    const picks = group.rows.filter((r) => isDfsRow(r) && !r.suspended && r.dfsMultiplier! > 0);
    if (picks.length === 0) continue;
    const fair = new Map<string, number>(group.outcomes.map((side) => [side, 0]));
    const used: string[] = [];
    let newestSharp = 0;
    for (const book of config.sharpBooks) {
      const quotes = group.outcomes.map((side) =>
        group.rows.find((r) => r.sportsbook === book && r.side === side && !r.suspended && (r.priceDecimal ?? 0) > 1));
      if (quotes.some((q) => q === undefined)) continue;
      const times = quotes.map((q) => ms(q!.updated));
      if (now - Math.min(...times) > config.stalenessMs) continue;
      const probabilities = devig(method, quotes.map((q) => q!.priceDecimal!));
      group.outcomes.forEach((side, k) => fair.set(side, fair.get(side)! + probabilities[k]));
      used.push(book);
      newestSharp = Math.max(newestSharp, ...times);
    }
    if (used.length === 0) continue;
    for (const pick of picks) {
      if (!fair.has(pick.side)) continue;
      const fairProbability = fair.get(pick.side)! / used.length;
      const breakeven = breakevenProbability(baseLegDecimalOf(config, pick.sportsbook), pick.dfsMultiplier!);
      const record = edgeRecord(
        {
          eventId: pick.eventId,
          league: pick.league,
          market: pick.market,
          marketSubtype: pick.marketSubtype,
          period: pick.period,
          playerId: pick.playerId ?? null,
          playerName: pick.playerName ?? null,
          eventStartTime: pick.eventStartTime,
        },
        {
          id: pick.id,
          source: pick.sportsbook,
          selection: pick.selection,
          side: pick.side,
          line: pick.line ?? null,
          dfsMultiplier: pick.dfsMultiplier!,
          breakevenProbability: breakeven,
          fairProbability,
          sharpBooks: used,
          devig: method,
          updated: new Date(Math.max(ms(pick.updated), newestSharp)).toISOString(),
        },
      );
      if (record.edge >= minEdge) found.push(record);
    }
  }
  return found.sort(byScore((r: EdgeRecord) => r.edge));
}
