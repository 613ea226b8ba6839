// The messages between the main thread (alerts.ts) and the delivery thread
// (deliveryThread.ts). A producer tick is one message whatever its size: the events'
// bodies as UTF-8 lines in one buffer and their times in a Float64Array, both
// transferred (moved, not copied). An admin operation is a call with an id, answered by
// one reply carrying the same id.
import type { AlertsConfig } from './alertsConfig.ts';
import type { DeliveryHost, DeliveryStats, Followed } from './deliveryHost.ts';
import type { ThreadUsage } from './threadUsage.ts';

/** The delivery thread's counters, with what it cost: the outbox's fdatasyncs and the thread's CPU (bench/alerts.bench.ts). */
export interface ThreadStats extends DeliveryStats {
  /** fdatasyncs of alerts.db's WAL completed since the start. */
  walSyncs: number;
  /** The delivery thread's own CPU time and run-queue wait since it started (null: not Linux). */
  thread: ThreadUsage | null;
  /** The thread's nice value (null: left at the process's, ALERTS_THREAD_NICE=0 or not Linux). */
  nice: number | null;
  /** The thread's id (Linux; null elsewhere). */
  tid: number | null;
}

/** The operations the main thread can ask of the delivery thread (the admin API's, and the counters). */
export interface HostCalls {
  list: DeliveryHost['list'];
  get: DeliveryHost['get'];
  create: DeliveryHost['create'];
  update: DeliveryHost['update'];
  remove: DeliveryHost['remove'];
  replay: DeliveryHost['replay'];
  retryNow: DeliveryHost['retryNow'];
  deadLetters: DeliveryHost['deadLetters'];
  stats: () => ThreadStats;
  metrics: DeliveryHost['metrics'];
}
export type CallName = keyof HostCalls;

export type ToThread =
  /** bodies: the events' JSON, '\n'-separated (JSON text holds no raw newline); createdAt[i]: event i's engine time. */
  | { kind: 'events'; bodies: Uint8Array; createdAt: Float64Array }
  | { kind: 'call'; id: number; name: CallName; args: unknown[] }
  /** Drop delivered events created before cutoff (engine clock ms). */
  | { kind: 'prune'; cutoff: number }
  /** Stop the workers, write the progress, close alerts.db, answer closed, end. */
  | { kind: 'close' };

export type FromThread =
  | { kind: 'ready'; followed: Followed[] }
  /** alerts.db could not be opened (the thread ends). */
  | { kind: 'failed'; error: string }
  | { kind: 'log'; level: 'info' | 'warn' | 'error'; fields: Record<string, unknown>; line: string }
  | { kind: 'reply'; id: number; value?: unknown; error?: string }
  | { kind: 'closed' };

/** What the thread starts with (workerData). */
export interface ThreadData {
  config: AlertsConfig;
}
