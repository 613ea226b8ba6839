// HTTP client of The Odds API v4. Every call goes through one gate, so a 429's
// Retry-After holds back every later call to the provider, not only the refused one.
// Faults:
//   401            ApiKeyRejected (fatal: the feed stops and says so), unless its message
//                  says the usage quota is used up: QuotaExhausted (the feed pauses)
//   429            wait Retry-After (seconds or an HTTP date; without it, back off), retry
//   5xx / network  back off exponentially with jitter, retry up to maxAttempts
//   / timeout      (a call taking longer than timeoutMs counts as a network error)
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

/** The provider refuses calls because this month's credits are spent (x-requests-remaining 0, or a 401 saying so). */
export class QuotaExhausted extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'QuotaExhausted';
  }
}

/** A 401 whose message is about usage credits rather than the key itself. */
const QUOTA_MESSAGE = /quota|usage|credits/i;

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
  /** Per call (default 30 s). */
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
  /** x-requests-remaining of this answer, null when it did not say. */
  remaining: number | null;
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

/** Resolves after ms, or at once when the signal aborts (a stopping feed does not sit out a back-off). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

export class ProviderClient {
  readonly quota: Quota = { remaining: null, used: null, last: null };
  /** Credits spent through this client (the sum of x-requests-last). */
  creditsSpent = 0;
  calls = 0;
  private notBefore = 0;
  private readonly stopping = new AbortController();
  private readonly baseUrl: string;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly log: (line: string) => void;

  constructor(private readonly options: ProviderClientOptions) {
    this.baseUrl = options.baseUrl ?? DEFAULT_BASE_URL;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => abortableSleep(ms, this.stopping.signal));
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
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    for (let attempt = 1; ; attempt++) {
      const wait = this.notBefore - this.now();
      if (wait > 0) await this.sleep(wait);
      if (this.stopped()) throw new ProviderRequestError(0, `${what}: stopped`);
      this.calls++;
      let status: number;
      let headers: Headers;
      let text: string;
      try {
        const timeout = AbortSignal.timeout(timeoutMs);
        const signal = AbortSignal.any([timeout, this.stopping.signal]);
        const response = await fetch(url, { headers: { accept: 'application/json' }, signal });
        status = response.status;
        headers = response.headers;
        // the body is read under the same deadline: a provider that sends headers and then stalls times out too
        text = await response.text();
      } catch (error) {
        if (this.stopped()) throw new ProviderRequestError(0, `${what}: stopped`);
        const why = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (error as Error).message;
        if (attempt >= maxAttempts) throw new ProviderRequestError(0, `${what}: ${why} (gave up after ${attempt} attempts)`);
        await this.backOff(attempt, `${what}: ${why}`);
        continue;
      }
      this.readQuota(headers);
      if (status === 200) {
        try {
          return { body: JSON.parse(text) as unknown, cost: this.quota.last ?? 0, remaining: headerNumber(headers, 'x-requests-remaining') };
        } catch {
          throw new MalformedResponse(`${what}: the body is not JSON (${text.slice(0, 80)})`);
        }
      }
      const message = providerMessage(text);
      if (status === 401) {
        if (QUOTA_MESSAGE.test(message)) throw new QuotaExhausted(`The Odds API refused ${path}: the usage quota is spent (401: ${message})`);
        throw new ApiKeyRejected(`The Odds API refused the API key (401${message ? `: ${message}` : ''}); check --api-key-file / ODDS_API_KEY`);
      }
      if (status === 429) {
        const after = retryAfterMs(headers.get('retry-after'), this.now());
        const ms = after ?? this.backOffMs(attempt);
        // every call waits for this, not just the refused one
        this.notBefore = Math.max(this.notBefore, this.now() + ms);
        this.log(`the-odds-api: 429 on ${path}${message ? ` (${message})` : ''}; every call waits ${Math.ceil(ms / 1000)} s`);
        if (attempt >= maxAttempts) throw new ProviderRequestError(429, `${what}: still rate limited after ${attempt} attempts`);
        continue;
      }
      if (status >= 500) {
        if (attempt >= maxAttempts) throw new ProviderRequestError(status, `${what}: ${status} after ${attempt} attempts`);
        await this.backOff(attempt, `${what}: ${status}${message ? ` ${message}` : ''}`);
        continue;
      }
      throw new ProviderRequestError(status, `${what}: ${status}${message ? ` ${message}` : ''}`);
    }
  }

  /** Aborts the call in flight and any wait before the next: a stopping feed does not sit out a back-off. */
  stop(): void {
    this.stopping.abort();
  }

  private stopped(): boolean {
    return this.stopping.signal.aborted;
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
    this.log(`the-odds-api: ${why}; retrying in ${(ms / 1000).toFixed(1)} s (attempt ${attempt + 1})`);
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
