// The reference for the trader screens: fair lines, best prices, +EV, middles and steam
// recomputed from scratch out of plain odds rows (the JSON objects /odds serves) and,
// for steam, each row's full price history. Written apart from engine/signals/
// screenBook.ts and steamDetector.ts (own grouping, own best-price pick, own families,
// full histories instead of rings), sharing only the devig formulas, so comparing the
// two checks the bookkeeping and the rules rather than one piece of code against itself.

import { devig, type DevigMethod } from '../../engine/signals/devig.ts';
import { decimalToAmerican } from '../../engine/model.ts';
import type {
  BestPriceRecord, FairLineRecord, MiddleLeg, MiddleRecord, PositiveEvRecord, StaleBook, SteamRecord, WeightedBook,
} from '../../engine/signals/screenRecords.ts';
import type { OddsRowJson } from './bruteForce.ts';

interface Group {
  id: string;
  family: string;
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

export function screenGroups(rows: readonly OddsRowJson[]): Group[] {
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
    const id = `${row.eventId}:${row.marketSubtype}:${row.period}:${lineKey}:${scope}`;
    let group = groups.get(id);
    if (group === undefined) {
      group = { id, family: `${row.eventId}:${row.marketSubtype}:${row.period}:${scope}`, line, outcomes, rows: [] };
      groups.set(id, group);
    }
    group.rows.push(row);
  }
  return [...groups.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}

const usable = (row: OddsRowJson): boolean => row.dfsMultiplier === undefined && !row.suspended && row.priceDecimal !== undefined && row.priceDecimal > 1;
const ms = (iso: string): number => Date.parse(iso);
const iso = (t: number): string => new Date(t).toISOString();
const fairAmerican = (p: number): number => decimalToAmerican(1 / p);

function market(row: OddsRowJson) {
  return {
    eventId: row.eventId, league: row.league, market: row.market, marketSubtype: row.marketSubtype, period: row.period,
    playerId: row.playerId ?? null, playerName: row.playerName ?? null, eventStartTime: row.eventStartTime,
  };
}

interface Fair {
  fair: number[];
  used: WeightedBook[];
  oldest: number;
  newest: number;
}

export function referenceFair(group: Group, now: number, method: DevigMethod, sharpBooks: readonly WeightedBook[], stalenessMs: number): Fair | null {
  const n = group.outcomes.length;
  const sum = new Array<number>(n).fill(0);
  let weight = 0;
  const used: WeightedBook[] = [];
  let oldest = Infinity;
  let newest = 0;
  for (const book of sharpBooks) {
    const quotes = group.outcomes.map((side) => group.rows.find((r) => r.sportsbook === book.sportsbook && r.side === side && usable(r)));
    if (quotes.some((q) => q === undefined)) continue;
    const times = quotes.map((q) => ms(q!.updated));
    if (now - Math.min(...times) > stalenessMs) continue;
    const p = devig(method, quotes.map((q) => q!.priceDecimal!));
    p.forEach((x, k) => { sum[k] += book.weight * x; });
    weight += book.weight;
    used.push({ ...book });
    oldest = Math.min(oldest, ...times);
    newest = Math.max(newest, ...times);
  }
  if (used.length === 0) return null;
  return { fair: sum.map((x) => x / weight), used, oldest, newest };
}

export function referenceFairLines(rows: readonly OddsRowJson[], now: number, method: DevigMethod, sharpBooks: readonly WeightedBook[], stalenessMs: number): FairLineRecord[] {
  const out: FairLineRecord[] = [];
  for (const group of screenGroups(rows)) {
    const fair = referenceFair(group, now, method, sharpBooks, stalenessMs);
    if (fair === null) continue;
    out.push({
      id: group.id,
      ...market(group.rows[0]!),
      line: group.line,
      devig: method,
      outcomes: group.outcomes.map((side, k) => ({ side, fairProbability: fair.fair[k]!, fairPriceDecimal: 1 / fair.fair[k]!, fairPriceAmerican: fairAmerican(fair.fair[k]!) })),
      sharpBooks: fair.used,
      quotes: fair.used.length * group.outcomes.length,
      oldestQuoteAgeMs: now - fair.oldest,
      newestQuoteAgeMs: now - fair.newest,
      updated: iso(fair.newest),
    });
  }
  return out;
}

export function referenceBestPrices(rows: readonly OddsRowJson[], maxHold = Infinity): BestPriceRecord[] {
  const out: BestPriceRecord[] = [];
  for (const group of screenGroups(rows)) {
    const outcomes = group.outcomes.map((side) => {
      const quotes = group.rows.filter((r) => r.side === side && usable(r));
      if (quotes.length === 0) return null;
      const best = Math.max(...quotes.map((q) => q.priceDecimal!));
      const at = quotes.filter((q) => q.priceDecimal === best).sort((a, b) => (a.sportsbook < b.sportsbook ? -1 : a.sportsbook > b.sportsbook ? 1 : 0));
      return { side, priceAmerican: at[0]!.priceAmerican!, priceDecimal: best, sportsbooks: [...new Set(at.map((q) => q.sportsbook))], oddsId: at[0]!.id, updated: at[0]!.updated };
    });
    if (outcomes.some((o) => o === null)) continue;
    const hold = outcomes.reduce((s, o) => s + 1 / o!.priceDecimal, 0) - 1;
    if (!(hold <= maxHold)) continue;
    out.push({ id: group.id, ...market(group.rows[0]!), line: group.line, outcomes: outcomes as BestPriceRecord['outcomes'], hold, updated: iso(Math.max(...outcomes.map((o) => ms(o!.updated)))) });
  }
  return out.sort((a, b) => (a.hold - b.hold) || (a.id < b.id ? -1 : 1));
}

export function referencePositiveEv(rows: readonly OddsRowJson[], now: number, method: DevigMethod, minEv: number, sharpBooks: readonly WeightedBook[], stalenessMs: number, books: readonly string[] | null = null): PositiveEvRecord[] {
  const out: PositiveEvRecord[] = [];
  for (const group of screenGroups(rows)) {
    const fair = referenceFair(group, now, method, sharpBooks, stalenessMs);
    if (fair === null) continue;
    for (const row of group.rows) {
      const k = group.outcomes.indexOf(row.side);
      if (k < 0 || !usable(row) || (books !== null && !books.includes(row.sportsbook))) continue;
      const ev = fair.fair[k]! * row.priceDecimal! - 1;
      if (!(ev >= minEv)) continue;
      out.push({
        id: row.id, groupId: group.id, ...market(row), sportsbook: row.sportsbook, selection: row.selection, side: row.side, line: row.line ?? null,
        priceAmerican: row.priceAmerican!, priceDecimal: row.priceDecimal!, fairProbability: fair.fair[k]!, fairPriceAmerican: fairAmerican(fair.fair[k]!),
        ev, devig: method, sharpBooks: fair.used.map((b) => b.sportsbook), updated: iso(Math.max(ms(row.updated), fair.newest)),
      });
    }
  }
  return out.sort((a, b) => (b.ev - a.ev) || (a.id < b.id ? -1 : 1));
}

/** Every pair of an over (home) at one line and an under (away) at another where a result wins both. */
export function referenceMiddles(rows: readonly OddsRowJson[], minWidth = 0, maxCost = Infinity): MiddleRecord[] {
  const out: MiddleRecord[] = [];
  const best = (group: Group, side: string): OddsRowJson | undefined =>
    group.rows.filter((r) => r.side === side && usable(r)).sort((a, b) => (b.priceDecimal! - a.priceDecimal!) || (a.sportsbook < b.sportsbook ? -1 : 1))[0];
  const groups = screenGroups(rows).filter((g) => g.line !== null && g.outcomes.length === 2);
  for (const a of groups) {
    for (const b of groups) {
      if (a === b || a.family !== b.family) continue;
      const total = a.outcomes[0] === 'OVER';
      // a total of t wins OVER a.line and UNDER b.line when a.line < t < b.line; a home margin m
      // wins HOME at home line a.line and AWAY (home line b.line) when -a.line < m < -b.line
      const width = total ? b.line! - a.line! : a.line! - b.line!;
      if (!(width > 0) || width < minWidth) continue;
      const first = best(a, total ? 'OVER' : 'HOME');
      const second = best(b, total ? 'UNDER' : 'AWAY');
      if (first === undefined || second === undefined) continue;
      const implied = 1 / first.priceDecimal! + 1 / second.priceDecimal!;
      if (!(1 - 1 / implied <= maxCost)) continue;
      const leg = (r: OddsRowJson): MiddleLeg => ({ oddsId: r.id, sportsbook: r.sportsbook, side: r.side, line: r.line!, priceAmerican: r.priceAmerican!, priceDecimal: r.priceDecimal!, stake: 1 / r.priceDecimal! / implied, updated: r.updated });
      const low = Math.min(a.line!, b.line!);
      const high = Math.max(a.line!, b.line!);
      const text = (x: number) => (x < 0 ? `m${-x}` : String(x));
      out.push({
        id: `${a.family}:${text(low)}:${text(high)}`, type: total ? 'total' : 'spread', ...market(first), width, legs: [leg(first), leg(second)],
        impliedSum: implied, worstCaseCost: 1 - 1 / implied, middleProfit: 2 / implied - 1, updated: iso(Math.max(ms(first.updated), ms(second.updated))),
      });
    }
  }
  return out.sort((x, y) => (x.worstCaseCost - y.worstCaseCost) || (x.id < y.id ? -1 : 1));
}

/**
 * Steam over full price histories: called for each tick of a sharp row after the board
 * has it. history: the row's usable price changes (time, decimal) before this tick,
 * oldest first; fired: the start times of its moves reported so far.
 */
export function referenceSteam(
  row: OddsRowJson,
  history: readonly { t: number; price: number }[],
  fired: Set<number>,
  rows: readonly OddsRowJson[],
  config: { unit: 'points' | 'cents'; threshold: number; windowMs: number },
): SteamRecord | null {
  if (!usable(row) || history.length === 0) return null;
  const price = row.priceDecimal!;
  if (history[history.length - 1]!.price === price) return null;
  const t = ms(row.updated);
  const inForce = [...history].reverse().find((h) => h.t <= t - config.windowMs) ?? history[0]!;
  const points = (1 / price - 1 / inForce.price) * 100;
  if (!(points > 0)) return null;
  const fromAmerican = decimalToAmerican(inForce.price);
  const toAmerican = decimalToAmerican(price);
  const scale = (a: number) => (a < 0 ? a + 100 : a - 100);
  const cents = Math.abs(scale(toAmerican) - scale(fromAmerican));
  if ((config.unit === 'points' ? points : cents) < config.threshold - 1e-9 || fired.has(inForce.t)) return null;
  fired.add(inForce.t);
  const group = screenGroups(rows).find((g) => g.rows.some((r) => r.id === row.id))!;
  const stale: StaleBook[] = group.rows
    .filter((r) => r.id !== row.id && r.side === row.side && usable(r) && r.priceDecimal! > price)
    .map((r) => ({ sportsbook: r.sportsbook, oddsId: r.id, priceAmerican: r.priceAmerican!, priceDecimal: r.priceDecimal!, updated: r.updated }))
    .sort((a, b) => (b.priceDecimal - a.priceDecimal) || (a.sportsbook < b.sportsbook ? -1 : 1));
  return {
    id: `${row.id}@${t}`, oddsId: row.id, groupId: group.id, ...market(row), sportsbook: row.sportsbook, selection: row.selection, side: row.side,
    line: row.line ?? null, fromPriceAmerican: fromAmerican, toPriceAmerican: toAmerican, fromPriceDecimal: inForce.price, toPriceDecimal: price,
    movePoints: points, moveCents: cents, from: iso(inForce.t), at: iso(t), staleBooks: stale,
  };
}
