// The pages the service shows a person: GET / (the live board), GET /docs (the API
// reference rendered from /api/v1/openapi.json), GET /docs/stream (the push stream's
// reference rendered from /api/v1/asyncapi.json), their bundled assets under
// /assets/:name, and the site icon at /favicon.ico (the pages link it as an asset; a
// browser or tool that asks at the old fixed path finds it too, not a 404). The bytes
// come from web/bundle.ts, built once per process on the first request that needs them
// (a pending result keeps that request open meanwhile), so processes that never serve a
// page, such as most tests, never bundle.
//
// HTML answers Cache-Control: no-cache (revalidated by ETag, so a restart with changed
// sources is seen at once); assets are named by content hash and may be cached for good.
import { buildWebBundle, type WebAsset, type WebBundle } from '../../web/bundle.ts';
import { notFound } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { LargeBodyResult, PendingLargeBodyResult } from '../request.ts';

const PAGE_PATHS = ['/', '/docs', '/docs/stream'] as const;
const IMMUTABLE = 'public, max-age=31536000, immutable';

export function webRoutes(): AnyRoute[] {
  let built: WebBundle | null = null;
  let building: Promise<WebBundle> | null = null;
  const bundle = (): Promise<WebBundle> => {
    building ??= buildWebBundle().then(
      (done) => (built = done),
      (error: unknown) => {
        building = null; // the next request tries again (and reports the error again)
        throw error;
      },
    );
    return building;
  };
  /** Resolves the asset now when the bundle exists, else once it is built. */
  const answer = (pick: (b: WebBundle) => WebAsset | undefined, what: string, cacheControl?: string): LargeBodyResult | PendingLargeBodyResult => {
    const resultOf = (b: WebBundle): LargeBodyResult => {
      const found = pick(b);
      if (found === undefined) throw notFound(`no such asset: ${what}`);
      return { kind: 'large', chunks: [found.bytes], etag: found.etag, contentType: found.contentType, cacheControl };
    };
    if (built !== null) return resultOf(built);
    return { kind: 'pending', body: bundle().then(resultOf) };
  };

  const pages = PAGE_PATHS.map((path) =>
    defineRoute({
      path,
      auth: 'none',
      documented: false,
      response: 'OpenApiDocument',
      query: [],
      handle: () => answer((b) => b.pages.get(path), path),
    }),
  );
  const assets = defineRoute({
    path: '/assets/:name',
    auth: 'none',
    documented: false,
    response: 'OpenApiDocument',
    query: [],
    handle: (req) => answer((b) => b.assets.get(req.params.name!), req.params.name!, IMMUTABLE),
  });
  const favicon = defineRoute({
    path: '/favicon.ico',
    auth: 'none',
    documented: false,
    response: 'OpenApiDocument',
    query: [],
    handle: () => answer((b) => b.favicon, 'favicon', 'public, max-age=86400'),
  });
  return [...pages, assets, favicon];
}
