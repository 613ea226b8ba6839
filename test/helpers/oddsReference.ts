// Brute-force oracle for the odds routes: every row of the board through the engine's
// reference renderer (rowObject, JSON.stringify-equivalent), filtered by the routes'
// rules written out plainly (the OpenAPI descriptions of /odds and its parameters), sorted by (sportsbook, id).
// No index, no posting list, no fragment: what the routes must agree with.
import type { OddsEngine } from '../../engine/engine.ts';
import type { OddsFormat } from '../../engine/rowJson.ts';

export type Row = Record<string, any>;

export interface ReferenceFilter {
  leagues?: string[];
  sportsbooks?: string[];
  markets?: string[];
  eventIds?: string[];
  playerId?: string;
  teamId?: string;
  scope?: 'event' | 'season' | 'tournament';
  isMain?: boolean;
  /** /odds/updated: rows (tombstones included) with updated >= since. */
  since?: number;
}

const SCOPE_VALUE = { event: undefined, season: 'SEASON', tournament: 'TOURNAMENT' } as const;

export function compareRows(a: Row, b: Row): number {
  if (a.sportsbook !== b.sportsbook) return a.sportsbook < b.sportsbook ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const memo = new WeakMap<OddsEngine, { seq: number; rows: Map<string, Row[]> }>();

/**
 * Every live row (and, with tombstones, every tombstone) as the reference renderer
 * draws it; remembered per engine seq (treat the result as read-only).
 */
export function boardRows(engine: OddsEngine, format: OddsFormat, tombstones = false): Row[] {
  let entry = memo.get(engine);
  if (entry === undefined || entry.seq !== engine.seq) memo.set(engine, (entry = { seq: engine.seq, rows: new Map() }));
  const key = `${format}:${tombstones}`;
  let rows = entry.rows.get(key);
  if (rows === undefined) entry.rows.set(key, (rows = renderBoard(engine, format, tombstones)));
  return rows;
}

function renderBoard(engine: OddsEngine, format: OddsFormat, tombstones: boolean): Row[] {
  const rows: Row[] = [];
  for (let slot = 0; slot < engine.store.size; slot++) {
    if (engine.isLive(slot) || (tombstones && engine.isTombstone(slot))) rows.push(JSON.parse(JSON.stringify(engine.rowObject(slot, format))));
  }
  return rows;
}

export function referenceRows(engine: OddsEngine, filter: ReferenceFilter, format: OddsFormat = 'all'): Row[] {
  const delta = filter.since !== undefined;
  const all = boardRows(engine, 'all', delta);
  const notMain = filter.isMain === true ? notMainIds(all.filter((row) => row.removed !== true)) : new Set<string>();
  const keep = new Set(all.filter((row) => matches(engine, row, filter) && !notMain.has(row.id)).map((row) => row.id));
  const rows = format === 'all' ? all : boardRows(engine, format, delta);
  return rows.filter((row) => keep.has(row.id)).sort(compareRows);
}

function matches(engine: OddsEngine, row: Row, f: ReferenceFilter): boolean {
  if (f.since !== undefined && Date.parse(row.updated) < f.since) return false;
  if (f.leagues && !f.leagues.some((league) => league.toLowerCase() === row.league)) return false;
  if (f.sportsbooks && !f.sportsbooks.some((book) => book.toLowerCase() === row.sportsbook)) return false;
  if (f.markets) {
    const market = String(row.market).toUpperCase();
    const subtype = String(row.marketSubtype).toUpperCase();
    if (!f.markets.some((token) => market.includes(token.toUpperCase()) || subtype.includes(token.toUpperCase()))) return false;
  }
  if (f.eventIds && !f.eventIds.includes(row.eventId)) return false;
  if (f.playerId !== undefined && row.playerId !== f.playerId) return false;
  if (f.scope !== undefined && row.marketScope !== SCOPE_VALUE[f.scope]) return false;
  if (f.teamId !== undefined) {
    const event = engine.event(row.eventId);
    if (row.marketScope !== undefined || event === undefined || event.isFutures) return false;
    if (event.homeTeamId !== f.teamId && event.awayTeamId !== f.teamId) return false;
  }
  return true;
}

/**
 * is_main by brute force: group the priced, non-DFS OVER/UNDER rows by (event, book,
 * subtype, period, player or team-total side); in a group where at least two lines
 * are priced on both sides, every such line but the most balanced (ties: the lower
 * line) is not main. Everything else passes.
 */
export function notMainIds(rows: Row[]): Set<string> {
  const groups = new Map<string, Map<number, { over?: Row; under?: Row; ids: string[] }>>();
  for (const row of rows) {
    if ((row.side !== 'OVER' && row.side !== 'UNDER') || row.priceDecimal === undefined || row.line === undefined) continue;
    const scope = row.playerId ?? (row.market === 'TEAM_TOTAL' ? `team:${row.teamSide}` : '');
    const key = [row.eventId, row.sportsbook, row.marketSubtype, row.period, scope].join('|');
    let lines = groups.get(key);
    if (lines === undefined) groups.set(key, (lines = new Map()));
    let line = lines.get(row.line);
    if (line === undefined) lines.set(row.line, (line = { ids: [] }));
    if (row.side === 'OVER') line.over ??= row;
    else line.under ??= row;
    line.ids.push(row.id);
  }
  const out = new Set<string>();
  for (const lines of groups.values()) {
    const competing = [...lines.entries()].filter(([, l]) => l.over !== undefined && l.under !== undefined).sort((a, b) => a[0] - b[0]);
    if (competing.length < 2) continue;
    let best = competing[0]!;
    for (const entry of competing) if (gap(entry[1]) < gap(best[1])) best = entry;
    for (const entry of competing) if (entry !== best) for (const id of entry[1].ids) out.add(id);
  }
  return out;
}

export function gap(line: { over?: Row; under?: Row }): number {
  return Math.abs(1 / line.over!.priceDecimal - 1 / line.under!.priceDecimal);
}

/** A readable diff for assertion messages. */
export function idDiff(actual: Row[], expected: Row[]): string {
  const a = new Set(actual.map((row) => row.id));
  const e = new Set(expected.map((row) => row.id));
  const missing = [...e].filter((id) => !a.has(id)).slice(0, 5);
  const extra = [...a].filter((id) => !e.has(id)).slice(0, 5);
  return `got ${actual.length}, expected ${expected.length}; missing ${JSON.stringify(missing)}; extra ${JSON.stringify(extra)}`;
}
