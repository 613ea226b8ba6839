// GET /api/v1/snapshot: the whole board as one
// gzip JSON body. The route only picks the variant and hands the engine's newest
// complete version to the facade ({ kind: 'large' }), which answers 304 on a matching
// If-None-Match and otherwise streams the shared chunks with backpressure
// (http/largeBody.ts). A poll never waits for a refresh: it gets the newest complete
// version at once while the next one is built in the background
// (engine/snapshot/boardSnapshot.ts). With nothing changed, answering costs a flag
// check: no piece is touched and nothing is copied per client.
//
// The composition root (service/app.ts) builds the variant without history before the
// server listens, so there is always a version to answer with. The with-history
// variant is built on its first request: that request (and any arriving meanwhile)
// gets a pending result that the facade keeps open while the build runs in steps of
// STEP_MS between other requests.
import type { SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { LargeBodyResult, PendingLargeBodyResult } from '../request.ts';
import type { Services } from './services.ts';
import { BASE_URL, curlExample, KEY_HEADER, KEY_RULES } from './routeDocs.ts';

export const SNAPSHOT_PATH = '/api/v1/snapshot';
/** Longest the event loop is held by one step of a first build. */
const STEP_MS = 20;
const JSON_TYPE = 'application/json; charset=utf-8';

const DESCRIPTION = [
  'Every odds row on the board (futures included) grouped by event, as one gzip JSON body: always Content-Encoding: gzip, whatever Accept-Encoding says.',
  'Events are ordered by startTime, then id; rows inside an event by sportsbook, then id (the /odds order). Events without live rows are left out.',
  'Each row is exactly the /odds row (odds_format=all) plus priceHistory: null, or with include_history=true the selection\'s last 50 price changes oldest first ({fs, ls, pa, pd, dm, su}; fs/ls epoch seconds; keys absent when not applicable).',
  'count is the number of rows; updated is the board\'s as-of time (ISO-8601); syncToken is the same instant as epoch-millisecond digits: pass it as since to /odds/updated, then each response\'s meta.updated. A client that upserts those rows by id and deletes tombstones ("removed": true) holds what a fresh snapshot shows.',
  'ETag is strong and differs between the two variants; a matching If-None-Match answers 304 without a body.',
  'X-Board-Seq is the board sequence the body reflects (the seq an ingest acknowledgement reports): a poll gets the newest complete version at once, so just after a write it may still show an earlier sequence.',
  'Freshness: no answer misses a change older than SNAPSHOT_MAX_AGE_MS (default 2 s; 0 turns the bound off: a body refreshes only while polled, and a poll gets its newest version whatever its age), whatever the poll pattern: the variant without history is refreshed whenever the board moves, polled or not; a poll that finds its variant\'s newest version older than that (the with-history variant after an idle spell) waits for the next version. No answer carries a syncToken that /odds/updated would answer with the re-bootstrap note.',
  'include_history accepts true/false/1/0; another value: 400 invalid_parameter.',
  KEY_RULES,
].join(' ') +
  curlExample(
    '# --compressed: curl unzips the body (it is always gzip)',
    `curl -s --compressed ${KEY_HEADER} '${BASE_URL}/api/v1/snapshot' | jq '{updated, syncToken, count, events: (.events | length)}'`,
    `curl -s --compressed ${KEY_HEADER} '${BASE_URL}/api/v1/snapshot?include_history=true' -o snapshot.json`,
  );

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
      const body = snapshot.fresh(withHistory);
      if (body === null) return { kind: 'pending', body: snapshot.whenCurrent(withHistory, STEP_MS).then(resultOf) };
      // the newest version is older than SNAPSHOT_MAX_AGE_MS (a variant nobody polled lately): the next one answers
      if (body instanceof Promise) return { kind: 'pending', body: body.then(resultOf) };
      return resultOf(body);
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
    const result: LargeBodyResult = { kind: 'large', chunks: body.chunks, etag: body.etag, contentType: JSON_TYPE, contentEncoding: 'gzip', boardSeq: body.seq };
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
