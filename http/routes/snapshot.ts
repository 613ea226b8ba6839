// GET /api/v1/snapshot: the whole board as one
// gzip JSON body. The route only picks the variant and hands the engine's cached gzip
// member to the facade ({ kind: 'large' }), which answers 304 on a matching
// If-None-Match and otherwise streams the shared chunks with backpressure
// (http/largeBody.ts). With nothing changed since the last request, answering costs a
// flag check: no piece is touched and nothing is copied per client.
//
// The composition root (service/app.ts) builds the variant without history before the
// server listens, so the first client is answered at once and no build runs behind
// later traffic. After that, long work never holds the event loop: a request that finds its variant unbuilt
// (the with-history one is built on its first request) or with a large backlog (after
// a long time without requests) gets a pending result: the facade keeps it open while
// the pieces are rendered in STEP_MS steps and other requests are served. Otherwise
// the refresh runs inline (what changed since the previous request: a few ms).
import type { SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { LargeBodyResult, PendingLargeBodyResult } from '../request.ts';
import type { Services } from './services.ts';

export const SNAPSHOT_PATH = '/api/v1/snapshot';
/** Longest the event loop is held by one step of a build or a large backlog. */
const STEP_MS = 20;
const JSON_TYPE = 'application/json; charset=utf-8';

const DESCRIPTION = [
  'Every odds row on the board (futures included) grouped by event, as one gzip JSON body: always Content-Encoding: gzip, whatever Accept-Encoding says.',
  'Events are ordered by startTime, then id; rows inside an event by sportsbook, then id (the /odds order). Events without live rows are left out.',
  'Each row is exactly the /odds row (odds_format=all) plus priceHistory: null, or with include_history=true the selection\'s last 50 price changes oldest first ({fs, ls, pa, pd, dm, su}; fs/ls epoch seconds; keys absent when not applicable).',
  'count is the number of rows; updated is the board\'s as-of time (ISO-8601); syncToken is the same instant as epoch-millisecond digits: pass it as since to /odds/updated, then each response\'s meta.updated. A client that upserts those rows by id and deletes tombstones ("removed": true) holds what a fresh snapshot shows.',
  'ETag is strong and differs between the two variants; a matching If-None-Match answers 304 without a body.',
].join(' ');

export function snapshotRoutes(services: Pick<Services, 'snapshot'>): AnyRoute[] {
  const { snapshot } = services;

  const route = defineRoute({
    path: SNAPSHOT_PATH,
    auth: 'key',
    response: 'Snapshot',
    responseKind: 'gzip-json',
    summary: 'The full live board as one gzip JSON body (bootstrap for the /odds/updated sync).',
    description: DESCRIPTION,
    query: [{ name: 'include_history', kind: 'boolean', default: false, description: 'true fills each row\'s priceHistory (a larger body).' }],
    handle(req): LargeBodyResult | PendingLargeBodyResult {
      const withHistory = req.query.include_history;
      if (snapshot.isBehind(withHistory)) return { kind: 'pending', body: snapshot.whenCurrent(withHistory, STEP_MS).then(resultOf) };
      return resultOf(snapshot.current(withHistory));
    },
  });

  /** One result object per body: a poll of an unchanged board allocates nothing here. */
  const last: { plain: LargeBodyResult | null; history: LargeBodyResult | null; plainBody: SnapshotBody | null; historyBody: SnapshotBody | null } = {
    plain: null,
    history: null,
    plainBody: null,
    historyBody: null,
  };
  function resultOf(body: SnapshotBody): LargeBodyResult {
    if (body === last.plainBody) return last.plain!;
    if (body === last.historyBody) return last.history!;
    const result: LargeBodyResult = { kind: 'large', chunks: body.chunks, etag: body.etag, contentType: JSON_TYPE, contentEncoding: 'gzip' };
    if (body.withHistory) {
      last.history = result;
      last.historyBody = body;
    } else {
      last.plain = result;
      last.plainBody = body;
    }
    return result;
  }
  return [route];
}
