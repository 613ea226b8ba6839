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

/** Every arbitrage on the board (profit > 0), sorted by profit desc, id asc. */
export function bruteForceArbitrage(rows: readonly OddsRowJson[]): ArbitrageRecord[] {
  const found: ArbitrageRecord[] = [];
  for (const group of groupsOf(rows)) {
    const best: OddsRowJson[] = [];
    for (const side of group.outcomes) {
      const offers = group.rows.filter((r) => r.side === side && !isDfsRow(r) && !r.suspended && (r.priceDecimal ?? 0) > 1);
      offers.sort((a, b) => b.priceDecimal! - a.priceDecimal! || (a.id < b.id ? -1 : 1));
      if (offers.length > 0) best.push(offers[0]);
    }
    if (best.length < group.outcomes.length) continue;
    let impliedSum = 0;
    for (const leg of best) impliedSum += 1 / leg.priceDecimal!;
    if (!(impliedSum < 1)) continue;
    const first = group.rows[0];
    found.push({
      id: group.id,
      type: best.length === 3 ? 'three_way' : 'two_way',
      eventId: first.eventId,
      league: first.league,
      market: first.market,
      marketSubtype: first.marketSubtype,
      period: first.period,
      line: group.line,
      profit: 1 / impliedSum - 1,
      impliedSum,
      legs: best.map((leg) => ({
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
      updated: new Date(Math.max(...best.map((leg) => ms(leg.updated)))).toISOString(),
    });
  }
  return found.sort(byScore((r: ArbitrageRecord) => r.profit));
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
