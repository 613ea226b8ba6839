// The write path's own readiness: once the log stops taking appends (a failed fsync,
// which is never retried; a failed publish to the stream with LOG=nats), every batch
// is answered 503 log_unavailable until the process restarts and recovers from what
// the log really holds. The operator learns it three ways, all at once:
//
//   /readyz    the check "writePath", scoped to writes (http/routes/health.ts): the
//              ingest port answers 503 not_ready naming it, the public port stays 200
//              (reads are served from memory as before) and names it in its body; both
//              carry {"writePath": {"state", "since", "error", "action", ...}}
//   /metrics   odds_write_path_failed 1 and odds_write_path_failed_since_seconds (the
//              Unix time of the failure)
//   the log    one error line, event "write_path_failed", when it happens
//
// There is no way back without a restart, by design: after an fsync error the kernel
// may have dropped the dirty pages, so only re-reading the file tells what it holds.
import type { Registry } from 'prom-client';
import { registerLazyMetric } from '../http/metricsCollector.ts';
import type { ProbeState } from '../http/routes/health.ts';
import type { Logger } from './logger.ts';
import type { Operations } from './operations.ts';

export const WRITE_PATH_CHECK = 'writePath';
export const RESTART_ACTION = 'restart the process to recover: the start re-reads the log and restores every acknowledged batch; reads are served meanwhile';

export interface WritePathFailure {
  /** Epoch milliseconds. */
  since: number;
  /** The error as the system or the stream reported it. */
  error: string;
  /** What failed, in a sentence (the step, the file). */
  what: string;
  /** The last record known durable when it failed. */
  durableIndex: number;
}

export class WritePathHealth {
  private failure: WritePathFailure | null = null;

  constructor(
    operations: Operations,
    private readonly logger: Logger,
  ) {
    operations.readiness.probe(WRITE_PATH_CHECK, this.probe, 'writes');
    registerWritePathMetrics(operations.registry, () => this.failure);
  }

  /** The log stopped: said once (a second call changes nothing). */
  readonly failed = (failure: WritePathFailure): void => {
    if (this.failure !== null) return;
    this.failure = failure;
    this.logger.error(
      { event: 'write_path_failed', since: new Date(failure.since).toISOString(), error: failure.error, what: failure.what, durableIndex: failure.durableIndex, action: RESTART_ACTION },
      `the write path failed (${failure.what}: ${failure.error}); every batch is answered 503 log_unavailable until the process restarts; records up to ${failure.durableIndex} are durable`,
    );
  };

  private readonly probe = (): ProbeState => {
    const failure = this.failure;
    if (failure === null) return { ready: true, reason: '', info: { state: 'ok' } };
    const since = new Date(failure.since).toISOString();
    return {
      ready: false,
      reason: `failed since ${since} (${failure.what}: ${failure.error}); batches are refused 503 log_unavailable; ${RESTART_ACTION}`,
      info: { state: 'failed', since, error: failure.error, what: failure.what, durableIndex: failure.durableIndex, action: RESTART_ACTION },
    };
  };
}

function registerWritePathMetrics(registry: Registry, failure: () => WritePathFailure | null): void {
  registerLazyMetric(registry, {
    name: 'odds_write_path_failed',
    help: '1 once the log stopped taking batches (a failed fsync, or a failed publish with LOG=nats) until the process restarts; else 0.',
    type: 'gauge',
    values: () => [{ labels: {}, value: failure() === null ? 0 : 1 }],
  });
  registerLazyMetric(registry, {
    name: 'odds_write_path_failed_since_seconds',
    help: 'Unix time at which the log stopped taking batches; absent while it takes them.',
    type: 'gauge',
    values: () => {
      const f = failure();
      return f === null ? [] : [{ labels: {}, value: f.since / 1000 }];
    },
  });
}
