// When a failed delivery is tried again: exponential backoff with jitter. Attempt n
// (1 = the first retry) waits base * 2^(n-1), capped at maxMs, scaled by a random
// factor in [0.5, 1) ("equal jitter"): endpoints that failed together (one outage)
// spread their retries instead of returning in step, and no wait falls below half its
// step. A head batch still failing retryForMs after its first failure is dead-lettered.
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
  /** How long a batch is retried after its first failure before it is dead-lettered (default 24 h). */
  retryForMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 1000, maxMs: 60 * 60 * 1000, retryForMs: 24 * 60 * 60 * 1000 };

export function retryDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  return Math.round(step * (0.5 + random() * 0.5));
}
