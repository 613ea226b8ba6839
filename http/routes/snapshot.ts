// GET /api/v1/snapshot (service-spec 4.3, decisions E1/E2/F2): the whole board as one
// gzip JSON body. The route only picks the variant and hands the engine's cached gzip
// member to the facade ({ kind: 'large' }), which answers 304 on a matching
// If-None-Match and otherwise streams the shared chunks with backpressure
// (http/largeBody.ts). With nothing changed since the last request, answering costs a
// flag check: no piece is touched and nothing is copied per client.
//
// Start-up: the variant without history is built in the background in steps of
// WARM_STEP_MS (so the process answers other requests meanwhile); a request that
// comes first finishes the build itself. The with-history variant is built on its
// first request (see engine/snapshot/boardSnapshot.ts for its lifetime).
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { LargeBodyResult } from '../request.ts';
import type { AppContext } from './context.ts';

export const SNAPSHOT_PATH = '/api/v1/snapshot';
const WARM_STEP_MS = 20;
const JSON_TYPE = 'application/json; charset=utf-8';

const DESCRIPTION = [
  'Every odds row on the board (futures included) grouped by event, as one gzip JSON body: always Content-Encoding: gzip, whatever Accept-Encoding says.',
  'Events are ordered by startTime, then id; rows inside an event by sportsbook, then id (the /odds order). Events without live rows are left out.',
  'Each row is exactly the /odds row (odds_format=all) plus priceHistory: null, or with include_history=true the selection\'s last 50 price changes oldest first ({fs, ls, pa, pd, dm, su}; fs/ls epoch seconds; keys absent when not applicable).',
  'count is the number of rows; updated is the board\'s as-of time (ISO-8601); syncToken is the same instant as epoch-millisecond digits: pass it as since to /odds/updated, then each response\'s meta.updated (decisions F2). A client that upserts those rows by id and deletes tombstones ("removed": true) holds what a fresh snapshot shows.',
  'ETag is strong and differs between the two variants; a matching If-None-Match answers 304 without a body.',
].join(' ');

export function snapshotRoutes(ctx: AppContext): AnyRoute[] {
  const snapshot = new BoardSnapshot(ctx.engine, { clock: ctx.clock });
  const warmer = warmInBackground(snapshot);
  ctx.onClose(() => {
    clearTimeout(warmer.timer ?? undefined);
    snapshot.close();
  });

  const route = defineRoute({
    path: SNAPSHOT_PATH,
    auth: 'key',
    response: 'Snapshot',
    responseKind: 'gzip-json',
    summary: 'The full live board as one gzip JSON body (bootstrap for the /odds/updated sync).',
    description: DESCRIPTION,
    query: [{ name: 'include_history', kind: 'boolean', default: false, description: 'true fills each row\'s priceHistory (a larger body).' }],
    handle(req): LargeBodyResult {
      const body = snapshot.current(req.query.include_history);
      return { kind: 'large', chunks: body.chunks, etag: body.etag, contentType: JSON_TYPE, contentEncoding: 'gzip' };
    },
  });
  return [route];
}

/** Builds the plain variant in WARM_STEP_MS steps on an unref'd timer. */
function warmInBackground(snapshot: BoardSnapshot): { timer: NodeJS.Timeout | null } {
  const state: { timer: NodeJS.Timeout | null } = { timer: null };
  const step = (): void => {
    state.timer = snapshot.warm(false, WARM_STEP_MS) ? null : setTimeout(step, 0);
    state.timer?.unref();
  };
  state.timer = setTimeout(step, 0);
  state.timer.unref();
  return state;
}
