// Every request the page makes goes through here: only to this service's /api/v1 paths
// (relative URLs, so the browser sends them to the origin that served the page), with
// the API key from the key field when one is stored. The page's Content-Security-Policy
// (connect-src 'self') enforces the same in the browser.
const KEY_STORAGE = 'odds-engine.apiKey';

export function storedKey(): string {
  return localStorage.getItem(KEY_STORAGE) ?? '';
}

export function storeKey(key: string): void {
  if (key === '') localStorage.removeItem(KEY_STORAGE);
  else localStorage.setItem(KEY_STORAGE, key);
}

/** An error body of the API ({code, detail}) or a transport failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
  }
}

/**
 * GET path (which must start with /api/v1/) and parse the JSON body. cache: 'no-cache'
 * makes the browser revalidate with If-None-Match, so an unchanged list costs a 304.
 */
export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  if (!path.startsWith('/api/v1/')) throw new Error(`not an API path: ${path}`);
  const headers: Record<string, string> = { Accept: 'application/json' };
  const key = storedKey();
  if (key !== '') headers['X-Api-Key'] = key;
  let response: Response;
  try {
    response = await fetch(path, { headers, cache: 'no-cache', credentials: 'omit', signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, 'network', error instanceof Error ? error.message : String(error));
  }
  if (!response.ok) {
    let code = 'http_error';
    let detail = response.statusText;
    try {
      const body = (await response.json()) as { code?: string; detail?: string };
      code = body.code ?? code;
      detail = body.detail ?? detail;
    } catch {
      // not a JSON error body: keep the status text
    }
    throw new ApiError(response.status, code, detail);
  }
  return (await response.json()) as T;
}
