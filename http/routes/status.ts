// /api/v1/status: live odds rows and sources with live rows
// (suspended included, tombstones excluded). It needs no key and doubles as the readiness probe: it answers
// only once the board is loaded and the server listens. meta.updated is the board's
// as-of time (the counts carry no time of their own).
import type { OddsEngine } from '../../engine/engine.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import { BASE_URL, curlExample, ETAG_RULES } from './routeDocs.ts';

export function statusRoute(engine: OddsEngine): AnyRoute {
  return defineRoute({
    path: '/api/v1/status',
    auth: 'none',
    response: 'Status',
    query: [],
    summary: 'Live market count and sportsbook count; also the readiness probe.',
    description:
      `totalMarkets counts live odds rows (suspended included, tombstones excluded); sportsbooks counts sources with at least one live row. meta.updated is the time of the last change applied to the board. No key needed. ${ETAG_RULES}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/status'`),
    cache: { validity: () => engine.seq, capacity: 8 },
    handle: () => ({ kind: 'data', data: [engine.status()], updated: engine.asOf() }),
  });
}
