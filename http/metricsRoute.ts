// GET /metrics: the registry in the Prometheus text format, for a route set mounted on
// the ingest listener (service/operations.ts says why there). Never cached:
// each scrape reads the counters as they are. prom-client formats asynchronously, so
// the answer is a pending body the server writes when it is ready.
import type { Registry } from 'prom-client';
import { defineRoute, type AnyRoute } from './router.ts';
import type { LargeBodyResult, PendingLargeBodyResult } from './request.ts';

export const METRICS_PATH = '/metrics';

export function metricsRoute(registry: Registry): AnyRoute {
  let scrapes = 0;
  return defineRoute({
    path: METRICS_PATH,
    auth: 'none',
    authenticate: false,
    documented: false,
    response: 'OpenApiDocument',
    query: [],
    handle: (): PendingLargeBodyResult => ({
      kind: 'pending',
      body: registry.metrics().then(
        (text): LargeBodyResult => ({
          kind: 'large',
          chunks: [Buffer.from(text)],
          // a new tag per scrape: a revalidation never matches, every scrape gets the numbers
          etag: `"metrics-${++scrapes}"`,
          contentType: registry.contentType,
          cacheControl: 'no-store',
        }),
      ),
    }),
  });
}
