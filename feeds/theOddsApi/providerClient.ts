// HTTP client of The Odds API v4. Every call goes through one gate, so a 429's
// Retry-After holds back every later call to the provider, not only the refused one.
// Faults:
//   401            ApiKeyRejected (fatal: the feed stops and says so)
//   429            wait Retry-After (seconds or an HTTP date; without it, back off), retry
//   5xx / network  back off exponentially with jitter, retry up to maxAttempts
//   other 4xx      ProviderRequestError (that request is skipped; the feed goes on)
//   bad JSON       MalformedResponse (skipped likewise)
// The quota headers of each answer (x-requests-remaining, -used, -last) are kept for
// the budget planner and the progress line.

import { MalformedResponse } from './providerTypes.ts';

export const DEFAULT_BASE_URL = 'https://api.the-odds-api.com';

export class ApiKeyRejected extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'ApiKeyRejected';
  }
}

export class ProviderRequestError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
    this.name = 'ProviderRequestError';
  }
}

export interface Quota {
  /** Credits left this month (x-requests-remaining), null until an answer said. */
  remaining: number | null;
  used: number | null;
  /** What the last call cost (x-requests-last). */
  last: number | null;
}

export interface ProviderClientOptions {
  baseUrl?: string;
  apiKey: string;
  /** First back-off after a 5xx (doubles per attempt, times a jitter of 0.5..1.5). Default 1 s. */
  backoffBaseMs?: number;
  /** Back-off cap. Default 60 s. */
  backoffMaxMs?: number;
  /** Attempts per call before it fails. Default 5. */
  maxAttempts?: number;
  timeoutMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  log?: (line: string) => void;
}

export interface ProviderAnswer {
  body: unknown;
  /** Credits this call cost (x-requests-last; 0 when the answer did not say). */
  cost: number;
}

function headerNumber(headers: Headers, name: string): number | null {
  const text = headers.get(name);
  if (text === null || text.trim() === '') return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** Retry-After as milliseconds to wait (seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterMs(text: string | null, now: number): number | null {
  if (text === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.ceil(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

export class ProviderClient {
  readonly quota: Quota = { remaining: null, used: null, last: null };
  /** Credits spent through this client (the sum of x-requests-last). */
  creditsSpent = 0;
  calls = 0;
  private notBefore = 0;
  private readonly baseUrl: string;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly log: (line: string) => void;

  constructor(private readonly options: ProviderClientOptions) {
    this.baseUrl = options.baseUrl ?? DEFAULT_BASE_URL;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.log = options.log ?? (() => {});
  }

  /** GET path (e.g. /v4/sports/basketball_nba/odds) with the query parameters and the API key. */
  async get(path: string, params: Record<string, string> = {}): Promise<ProviderAnswer> {
    const url = new URL(path, this.baseUrl);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    url.searchParams.set('apiKey', this.options.apiKey);
    const maxAttempts = this.options.maxAttempts ?? 5;
    const what = `GET ${path}`;
    for (let attempt = 1; ; attempt++) {
      const wait = this.notBefore - this.now();
      if (wait > 0) await this.sleep(wait);
      this.calls++;
      let response: Response;
      try {
        response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
      } catch (error) {
        if (attempt >= maxAttempts) throw new ProviderRequestError(0, `${what}: ${(error as Error).message} (gave up after ${attempt} attempts)`);
        await this.backOff(attempt, `${what}: ${(error as Error).message}`);
        continue;
      }
      this.readQuota(response.headers);
      if (response.status === 200) {
        const text = await response.text();
        try {
          return { body: JSON.parse(text) as unknown, cost: this.quota.last ?? 0 };
        } catch {
          throw new MalformedResponse(`${what}: the body is not JSON (${text.slice(0, 80)})`);
        }
      }
      const text = await response.text().catch(() => '');
      const message = providerMessage(text);
      if (response.status === 401) {
        throw new ApiKeyRejected(`The Odds API refused the API key (401${message ? `: ${message}` : ''}); check --api-key / ODDS_API_KEY`);
      }
      if (response.status === 429) {
        const after = retryAfterMs(response.headers.get('retry-after'), this.now());
        const ms = after ?? this.backOffMs(attempt);
        // every call waits for this, not just the refused one
        this.notBefore = Math.max(this.notBefore, this.now() + ms);
        this.log(`the-odds-api: 429 on ${path}${message ? ` (${message})` : ''}; every call waits ${Math.ceil(ms / 1000)} s`);
        if (attempt >= maxAttempts) throw new ProviderRequestError(429, `${what}: still rate limited after ${attempt} attempts`);
        continue;
      }
      if (response.status >= 500) {
        if (attempt >= maxAttempts) throw new ProviderRequestError(response.status, `${what}: ${response.status} after ${attempt} attempts`);
        await this.backOff(attempt, `${what}: ${response.status}${message ? ` ${message}` : ''}`);
        continue;
      }
      throw new ProviderRequestError(response.status, `${what}: ${response.status}${message ? ` ${message}` : ''}`);
    }
  }

  private readQuota(headers: Headers): void {
    const remaining = headerNumber(headers, 'x-requests-remaining');
    const used = headerNumber(headers, 'x-requests-used');
    const last = headerNumber(headers, 'x-requests-last');
    if (remaining !== null) this.quota.remaining = remaining;
    if (used !== null) this.quota.used = used;
    this.quota.last = last;
    if (last !== null) this.creditsSpent += last;
  }

  private backOffMs(attempt: number): number {
    const base = this.options.backoffBaseMs ?? 1000;
    const cap = this.options.backoffMaxMs ?? 60_000;
    return Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + this.random());
  }

  private async backOff(attempt: number, why: string): Promise<void> {
    const ms = this.backOffMs(attempt);
    this.log(`the-odds-api: ${why}; retrying in ${(ms / 1000).toFixed(1)} s`);
    await this.sleep(ms);
  }
}

function providerMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message.slice(0, 200);
  } catch {
    // not JSON
  }
  return text.slice(0, 200);
}
