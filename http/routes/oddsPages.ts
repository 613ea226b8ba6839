// From a plan to a response: one engine query, rows rendered from the engine's cached
// per-row fragments, and the validity token the response cache compares on every
// request (memoized per plan on the engine seq, so an unchanged board answers a
// cached request, or its 304, without touching the engine's lists).
import type { OddsEngine } from '../../engine/engine.ts';
import { compareOddsKeys, type ArchivedTombstones, type ReplaySource } from '../../engine/archivedTombstones.ts';
import { formatCode } from '../../engine/rowJson.ts';
import type { PendingLargeBodyResult, RowsResult } from '../request.ts';
import type { OddsPlan } from './oddsPlan.ts';

export const RETENTION_NOTE = 'since is older than the retention window; re-bootstrap from /snapshot';

/** Token of a list route: follows the version of the lists that drive the query, read only when the engine seq moved. */
export function listToken(engine: OddsEngine, plan: OddsPlan): number {
  if (plan.holds(engine.seq)) return plan.lastToken;
  return plan.tokenOf(plan.none ? 0 : engine.odds.version(plan.query.filter));
}

/**
 * Token of /odds/updated: a first page carries the board's as-of time, which
 * moves with every change anywhere, so it follows the seq; a continuation page
 * repeats its cursor's as-of and follows the delta lists only.
 */
export function deltaToken(engine: OddsEngine, plan: OddsPlan): number {
  if (plan.asOf === undefined) return plan.tokenOf(engine.seq);
  if (plan.holds(engine.seq)) return plan.lastToken;
  return plan.tokenOf(plan.none ? 0 : engine.deltaVersion(plan.query.filter));
}

/** A keyset page of /odds, /players/{id}/odds or /teams/{id}/odds (or, with limit = every live row, of /events/{id}/odds). */
export function listPage(engine: OddsEngine, plan: OddsPlan, limit = plan.query.limit): RowsResult {
  if (plan.none) return empty(engine, plan, plan.note);
  const { filter, format } = plan.query;
  const page = engine.odds.page(filter, plan.after ?? null, limit);
  if (page.count === 0) return empty(engine, plan, plan.note);
  plan.emptyUpdated = null;
  const rows = engine.odds.render(page, format);
  const nextCursor = page.hasMore && page.lastId !== null ? plan.nextCursor(page.lastId) : null;
  return { kind: 'rows', rows, count: page.count, nextCursor, updated: page.maxUpdated, note: plan.note };
}

/**
 * A page of /odds/updated: meta.updated is the walk's as-of time, carried in the cursor.
 * A since past the board's tombstone horizon but inside the replay window is answered
 * off the event loop, with the rows the archive says were removed since (replayPage);
 * past the window, or when the archive cannot vouch for it, with the re-bootstrap note.
 */
export function deltaPage(engine: OddsEngine, plan: OddsPlan, replay: ReplaySource | null = null): RowsResult | PendingLargeBodyResult {
  const since = plan.query.since!;
  if (!plan.none && replay !== null && since < engine.deltaHorizon() && replay.covers(since)) {
    return { kind: 'pending', body: replay.tombstonesSince(since).then((archived) => (archived === null ? boardDeltaPage(engine, plan) : replayPage(engine, plan, archived))) };
  }
  return boardDeltaPage(engine, plan);
}

function boardDeltaPage(engine: OddsEngine, plan: OddsPlan): RowsResult {
  const asOf = plan.asOf ?? engine.asOf();
  const { filter, format, limit } = plan.query;
  const since = plan.query.since!;
  const page = plan.none ? null : engine.delta(filter, since, plan.after ?? null, limit);
  const note = joinNotes(plan.note, since < engine.deltaHorizon() ? RETENTION_NOTE : null);
  if (page === null || page.count === 0) return { kind: 'rows', rows: NO_ROWS, count: 0, nextCursor: null, updated: asOf, note };
  const rows = engine.odds.render(page, format);
  const nextCursor = page.hasMore && page.lastId !== null ? plan.nextCursor(page.lastId, asOf) : null;
  return { kind: 'rows', rows, count: page.count, nextCursor, updated: asOf, note };
}

/**
 * The board's delta merged, in the one odds order, with the archived rows removed since
 * that the board no longer holds (an id the board holds is the board's: its row is the
 * newer truth). Keyset paged like the board's delta: both sides start after the cursor.
 */
function replayPage(engine: OddsEngine, plan: OddsPlan, archived: ArchivedTombstones): RowsResult {
  const asOf = plan.asOf ?? engine.asOf();
  const { filter, format, limit } = plan.query;
  const since = plan.query.since!;
  const after = plan.after ?? null;
  const code = formatCode(format);
  const page = engine.delta(filter, since, after, limit);
  const boardSlots = page.slots.slice(0, page.count);
  const boardHasMore = page.hasMore;
  // the archived side: after the cursor, in the filter, not on the board
  const matcher = archived.matcher({ leagues: lowerCased(filter.leagues), sportsbooks: lowerCased(filter.sportsbooks), markets: filter.markets, eventIds: null, playerId: null });
  const afterBook = after === null ? null : after.split(':')[1] ?? '';
  const extra: number[] = [];
  for (const slot of archived.slots) {
    if (afterBook !== null && compareOddsKeys(archived.bookOf(slot), archived.idOf(slot), afterBook, after!) <= 0) continue;
    if (!matcher.matches(slot) || engine.slotOf(archived.idOf(slot)) >= 0) continue;
    extra.push(slot);
    if (extra.length > limit) break;
  }
  const s = engine.store;
  const parts: string[] = [];
  let b = 0;
  let e = 0;
  let lastId: string | null = null;
  while (parts.length < limit && (b < boardSlots.length || e < extra.length)) {
    const takeBoard =
      e === extra.length ||
      (b < boardSlots.length && compareOddsKeys(s.books.get(s.book[boardSlots[b]]), engine.idOf(boardSlots[b]), archived.bookOf(extra[e]), archived.idOf(extra[e])) < 0);
    if (takeBoard) {
      const slot = boardSlots[b++];
      parts.push(engine.fragments.join(Int32Array.of(slot), 1, code).toString());
      lastId = engine.idOf(slot);
    } else {
      const slot = extra[e++];
      parts.push(archived.json(slot, code));
      lastId = archived.idOf(slot);
    }
  }
  const hasMore = b < boardSlots.length || e < extra.length || boardHasMore;
  const nextCursor = hasMore && lastId !== null ? plan.nextCursor(lastId, asOf) : null;
  return { kind: 'rows', rows: parts.length === 0 ? NO_ROWS : Buffer.from(parts.join(',')), count: parts.length, nextCursor, updated: asOf, note: plan.note };
}

function lowerCased(values: string[] | null): string[] | null {
  return values === null ? null : values.map((value) => value.toLowerCase());
}

const NO_ROWS = Buffer.alloc(0);

/**
 * An empty page's meta.updated (when its data last changed) is the board's as-of
 * time when the page was first found empty, kept while it stays empty, so polling an
 * unchanged empty page keeps its body and ETag.
 */
function empty(engine: OddsEngine, plan: OddsPlan, note: string | null): RowsResult {
  plan.emptyUpdated ??= engine.asOf();
  return { kind: 'rows', rows: NO_ROWS, count: 0, nextCursor: null, updated: plan.emptyUpdated, note };
}

function joinNotes(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return `${a} ${b}`;
}
