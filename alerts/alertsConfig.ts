// The alerts' settings from the environment, each checked: a bad value stops the start
// naming the variable and what it allows (like service/config.ts does for the rest).
import { join } from 'node:path';
import { DEFAULT_RETRY, type RetryPolicy } from './backoff.ts';

export interface AlertsConfig {
  /** ALERTS=0 turns webhooks off (default on wherever there is a data dir). */
  enabled: boolean;
  dbPath: string;
  /** ALERTS_TICK_MS: how often the producer looks for new events (default 200). */
  tickMs: number;
  /** ALERTS_TIMEOUT_MS: the whole of one webhook request (default 10 s). */
  timeoutMs: number;
  /** ALERTS_MAX_IN_FLIGHT: webhook requests in flight over all endpoints (default 512; one per endpoint at most). */
  maxInFlight: number;
  retry: RetryPolicy;
  /** ALERTS_RETENTION_MS: delivered events are kept this long for replays (default 7 days). */
  retentionMs: number;
  /** ALERTS_THREAD_NICE: how many nice levels below the process's the delivery thread runs (default 0: the same). */
  threadNice: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max} (got an invalid value)`);
  return value;
}

export function readAlertsConfig(env: NodeJS.ProcessEnv, dataDir: string): AlertsConfig {
  const flag = env.ALERTS ?? '1';
  if (flag !== '0' && flag !== '1') throw new Error('ALERTS must be 0 or 1');
  const DAY = 24 * 60 * 60 * 1000;
  return {
    enabled: flag === '1',
    dbPath: env.ALERTS_DB_PATH || join(dataDir, 'alerts.db'),
    tickMs: int(env, 'ALERTS_TICK_MS', 200, 10, 60_000),
    timeoutMs: int(env, 'ALERTS_TIMEOUT_MS', 10_000, 100, 120_000),
    maxInFlight: int(env, 'ALERTS_MAX_IN_FLIGHT', 512, 1, 100_000),
    retry: {
      baseMs: int(env, 'ALERTS_RETRY_BASE_MS', DEFAULT_RETRY.baseMs, 1, DAY),
      maxMs: int(env, 'ALERTS_RETRY_MAX_MS', DEFAULT_RETRY.maxMs, 1, DAY),
      retryForMs: int(env, 'ALERTS_RETRY_FOR_MS', DEFAULT_RETRY.retryForMs, 0, 30 * DAY),
    },
    retentionMs: int(env, 'ALERTS_RETENTION_MS', 7 * DAY, 60_000, 365 * DAY),
    threadNice: int(env, 'ALERTS_THREAD_NICE', 0, 0, 19),
  };
}
