// Oracles and walkers for the catalog route tests: the expected rows are built from
// the generated board (cold fields) and the engine (status, live markets), filtered
// and sorted with plain code; the routes must agree with them.
import assert from 'node:assert/strict';
import type { Board, EventRecord } from '../../engine/model.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import type { TestApp } from './app.ts';

export type Json = Record<string, any>;

export const DAY_MS = 86_400_000;
export const WINDOW_MS = 14 * DAY_MS;

export function byStartThenId(a: { startTime: number; id: string }, b: { startTime: number; id: string }): number {
  if (a.startTime !== b.startTime) return a.startTime - b.startTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function minuteZ(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16) + 'Z';
}

/** The event list row the routes must show for a board event: status and hasOdds from the engine. */
export function expectedEventRow(engine: OddsEngine, e: EventRecord, live: ReadonlySet<string>): Json {
  return {
    id: e.id,
    homeTeamId: e.homeTeamId,
    homeTeamName: e.homeTeamName,
    awayTeamId: e.awayTeamId,
    awayTeamName: e.awayTeamName,
    startTime: minuteZ(e.startTime),
    status: engine.event(e.id)?.status ?? e.status,
    league: e.league,
    hasOdds: live.has(e.id),
    venueId: e.venueId,
    seasonYear: e.seasonYear,
    context: e.context,
  };
}

export interface EventOracleFilter {
  leagues?: string[];
  teamId?: string;
  status?: string;
  from?: number | null;
  to?: number | null;
  includeFutures?: boolean;
  activeOnly?: boolean;
}

/** Every board event matching the filter, in (startTime, id) order, as event list rows. */
export function expectedEvents(board: Board, engine: OddsEngine, f: EventOracleFilter): Json[] {
  const live = new Set(engine.eventIdsWithLiveRows());
  return board.events
    .filter((e) => {
      const status = engine.event(e.id)?.status ?? e.status;
      if (f.leagues !== undefined && !f.leagues.includes(e.league)) return false;
      if (f.teamId !== undefined && e.homeTeamId !== f.teamId && e.awayTeamId !== f.teamId) return false;
      if (f.status !== undefined && status !== f.status) return false;
      if (f.status === undefined && f.includeFutures !== true && e.isFutures) return false;
      if (f.from != null && e.startTime < f.from) return false;
      if (f.to != null && e.startTime >= f.to) return false;
      if (f.activeOnly === true && !live.has(e.id)) return false;
      return true;
    })
    .sort(byStartThenId)
    .map((e) => expectedEventRow(engine, e, live));
}

/** Follows nextCursor to the end (every page validated against the OpenAPI document). */
export async function walk(t: TestApp, route: string, path: string): Promise<{ rows: Json[]; pages: Json[] }> {
  const rows: Json[] = [];
  const pages: Json[] = [];
  let url = path;
  for (let guard = 0; guard < 10_000; guard++) {
    const { reply, body } = await t.call(route, url);
    assert.equal(reply.status, 200, `${url}: ${reply.body.toString()}`);
    assert.equal(body.meta.count, body.data.length);
    pages.push(body);
    rows.push(...body.data);
    if (body.nextCursor === null) return { rows, pages };
    url = `${path}${path.includes('?') ? '&' : '?'}cursor=${body.nextCursor}`;
  }
  throw new Error(`walk of ${path} did not end`);
}

export async function expectError(t: TestApp, route: string, path: string, status: number, code: string, param?: string | null): Promise<Json> {
  const { reply, body } = await t.call(route, path);
  assert.equal(reply.status, status, `${path}: ${reply.body.toString()}`);
  assert.equal(body.code, code, path);
  if (param !== undefined) assert.equal(body.param, param, path);
  return body;
}

export function ids(rows: readonly Json[]): string[] {
  return rows.map((r) => r.id);
}
