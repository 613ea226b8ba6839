// ETag revalidation for the typed client, as an openapi-fetch middleware: a GET whose
// URL answered 200 with an ETag before is sent again with If-None-Match; a 304 then
// turns back into the 200 kept from last time, so callers always get a body and the
// service sends none when nothing changed. A request that sets If-None-Match itself
// is left alone (it sees the 304). Bodies are kept per URL, least recently used
// dropped first past `capacity` URLs.
import type { Middleware } from 'openapi-fetch';

interface Kept {
  etag: string;
  body: ArrayBuffer;
  headers: Headers;
}

export interface EtagStats {
  /** Requests answered 304 and served from the kept body. */
  notModified: number;
  /** Requests answered with a full body. */
  fetched: number;
}

export class EtagCache {
  readonly stats: EtagStats = { notModified: 0, fetched: 0 };
  private readonly kept = new Map<string, Kept>();
  private readonly revalidating = new Set<string>();

  constructor(private readonly capacity = 256) {}

  readonly middleware: Middleware = {
    onRequest: ({ request, id }) => {
      if (request.method !== 'GET' || request.headers.has('If-None-Match')) return undefined;
      const kept = this.kept.get(request.url);
      if (kept === undefined) return undefined;
      this.revalidating.add(id);
      const revalidation = new Request(request);
      revalidation.headers.set('If-None-Match', kept.etag);
      return revalidation;
    },
    onResponse: async ({ request, response, id }) => {
      const ours = this.revalidating.delete(id);
      if (request.method !== 'GET') return undefined;
      const kept = this.kept.get(request.url);
      if (response.status === 304 && ours && kept !== undefined) {
        this.stats.notModified++;
        this.kept.delete(request.url);
        this.kept.set(request.url, kept); // most recently used last
        const headers = new Headers(kept.headers);
        for (const [name, value] of response.headers) headers.set(name, value);
        return new Response(kept.body.slice(0), { status: 200, headers });
      }
      const etag = response.headers.get('ETag');
      if (response.status !== 200 || etag === null) return undefined;
      this.stats.fetched++;
      const body = await response.clone().arrayBuffer();
      const headers = new Headers(response.headers);
      // the kept bytes are already decoded by fetch
      headers.delete('Content-Encoding');
      headers.delete('Content-Length');
      this.kept.delete(request.url);
      this.kept.set(request.url, { etag, body, headers });
      if (this.kept.size > this.capacity) this.kept.delete(this.kept.keys().next().value!);
      return undefined;
    },
  };
}
