// The process's own metrics beside the HTTP ones (http/metrics.ts), all read lazily at
// scrape time or counted into typed arrays:
//
//   odds_live_rows                         gauge    live odds rows on the board
//   odds_board_seq                         gauge    the board's change sequence
//   odds_board_updates_total{kind}         counter  row changes applied: insert, update, price, remove
//   odds_snapshot_refreshes_total{variant} counter  snapshot body refreshes
//   odds_snapshot_refresh_seconds_total{variant}    main-thread time spent rendering them
//   odds_snapshot_refresh_duration_seconds{variant} histogram: per version published, from
//                                                   the first rendering for it to its
//                                                   publication (worker compression and
//                                                   reads served between steps included)
//
// The push stream's (registerStreamMetrics) and the write path's (WritePathMetrics) are
// below. The engine, the stream hub and the write path do not know prom-client: they
// count into typed arrays or call a hook once per batch, fsync or checkpoint, and these
// functions read the arrays when /metrics is scraped.
import { statSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine/engine.ts';
import type { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import type { StreamHub } from '../engine/stream/streamHub.ts';
import { WIRE_FORMATS } from '../engine/stream/streamMessages.ts';
import { LazyHistogram, LazyHistogramByLabel, registerLazyMetric } from '../http/metricsCollector.ts';
import type { CheckpointReport, RestoreReport } from '../ingest/durableBoard.ts';
import { APPLIED_KINDS, INGEST_OUTCOMES, INGEST_VIAS, type IngestOutcome, type IngestVia } from '../ingest/ingest.ts';

const KINDS: readonly ChangeKind[] = ['insert', 'update', 'price', 'remove'];
const KIND_INDEX: Readonly<Record<ChangeKind, number>> = { insert: 0, update: 1, price: 2, remove: 3 };

/** Counts the engine's row changes by kind (an engine listener). */
export class UpdateCounter implements ChangeListener {
  readonly counts = new Float64Array(KINDS.length);
  rowChanged(_slot: number, kind: ChangeKind): void {
    this.counts[KIND_INDEX[kind]]!++;
  }
}

const SNAPSHOT_VARIANTS = ['plain', 'history'] as const;
/** Seconds: a few changed rows take a millisecond, a first build of the large board seconds. */
const REFRESH_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function registerBoardMetrics(registry: Registry, engine: OddsEngine, updates: UpdateCounter, snapshot: BoardSnapshot): void {
  registerLazyMetric(registry, { name: 'odds_live_rows', help: 'Live odds rows on the board (suspended included, removed rows excluded).', type: 'gauge', values: () => [{ labels: {}, value: engine.liveRows }] });
  registerLazyMetric(registry, { name: 'odds_board_seq', help: 'The board change sequence (moves with every applied change).', type: 'gauge', values: () => [{ labels: {}, value: engine.seq }] });
  registerLazyMetric(registry, {
    name: 'odds_board_updates_total',
    help: 'Row changes applied to the board, by kind.',
    type: 'counter',
    values: () => KINDS.map((kind, i) => ({ labels: { kind }, value: updates.counts[i]! })),
  });
  registerLazyMetric(registry, {
    name: 'odds_snapshot_refreshes_total',
    help: 'Refreshes of the /snapshot body, by variant.',
    type: 'counter',
    values: () => snapshot.stats().map((s) => ({ labels: { variant: s.variant }, value: s.refreshes })),
  });
  registerLazyMetric(registry, {
    name: 'odds_snapshot_refresh_seconds_total',
    help: 'Time spent refreshing the /snapshot body, by variant.',
    type: 'counter',
    values: () => snapshot.stats().map((s) => ({ labels: { variant: s.variant }, value: s.refreshMs / 1000 })),
  });
  const refreshDuration = new LazyHistogramByLabel(
    registry,
    'odds_snapshot_refresh_duration_seconds',
    'Time to publish a /snapshot version, by variant: from the first rendering for it to its publication, compression on the worker threads and the reads served between rendering steps included (versions published after start-up).',
    REFRESH_BOUNDS,
    'variant',
    SNAPSHOT_VARIANTS,
  );
  snapshot.onRefresh = (withHistory, seconds) => refreshDuration.observe(withHistory ? 1 : 0, seconds);
}

/** The push stream: subscribers now, messages and bytes sent, deltas held back, slow consumers dropped. */
export function registerStreamMetrics(registry: Registry, hub: StreamHub): void {
  registerLazyMetric(registry, {
    name: 'odds_stream_subscribers',
    help: 'Open push-stream subscriptions (WebSocket and SSE).',
    type: 'gauge',
    values: () => [{ labels: {}, value: hub.stats().subscriptions }],
  });
  registerLazyMetric(registry, { name: 'odds_stream_clients', help: 'Connected push-stream clients.', type: 'gauge', values: () => [{ labels: {}, value: hub.stats().clients }] });
  registerLazyMetric(registry, {
    name: 'odds_stream_messages_total',
    help: 'Push-stream messages handed to sockets, by wire format (json includes SSE).',
    type: 'counter',
    values: () => WIRE_FORMATS.map((format, i) => ({ labels: { format }, value: hub.sentMessages[i]! })),
  });
  registerLazyMetric(registry, {
    name: 'odds_stream_sent_bytes_total',
    help: 'Bytes of push-stream messages handed to sockets, by wire format.',
    type: 'counter',
    values: () => WIRE_FORMATS.map((format, i) => ({ labels: { format }, value: hub.sentBytes[i]! })),
  });
  registerLazyMetric(registry, {
    name: 'odds_stream_conflated_deltas_total',
    help: 'Deltas held back and folded into a later one, by reason: the subscription conflates (interval) or its client pushed back (backpressure).',
    type: 'counter',
    values: () => [
      { labels: { reason: 'interval' }, value: hub.heldBack[0]! },
      { labels: { reason: 'backpressure' }, value: hub.heldBack[1]! },
    ],
  });
  registerLazyMetric(registry, {
    name: 'odds_stream_slow_consumer_drops_total',
    help: 'Push-stream clients disconnected because they left more than STREAM_BUFFER_BYTES unread.',
    type: 'counter',
    values: () => [{ labels: {}, value: hub.stats().slowConsumerDrops }],
  });
}

const LATENCY_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const CHECKPOINT_BOUNDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const VIA_INDEX: Readonly<Record<IngestVia, number>> = { http: 0, ws: 1, process: 2 };
const OUTCOME_INDEX: Readonly<Record<IngestOutcome, number>> = { ok: 0, invalid: 1, error: 2 };

/**
 * The write path's metrics. The composition root hangs its methods on the write path's
 * hooks (Ingest.onBatch, FileBatchLog.onFsync, DurableBoard.onCheckpoint) and gives it
 * the Ingest's applied-change counts and the restore report to read at scrape time.
 */
export class WritePathMetrics {
  /** by via * outcomes + outcome */
  private readonly batches = new Float64Array(INGEST_VIAS.length * INGEST_OUTCOMES.length);
  private readonly ack: LazyHistogram;
  private readonly fsync: LazyHistogram;
  private readonly checkpoint: LazyHistogram;
  private lastCheckpointAt = -1;
  private lastCheckpointBytes = -1;
  private checkpointFailures = 0;

  constructor(registry: Registry, appliedByKind: Float64Array, restore: RestoreReport | null, now: () => number = Date.now) {
    registerLazyMetric(registry, {
      name: 'odds_ingest_batches_total',
      help: 'Ingest batches answered, by way in (http, ws, process: a feed or the simulator in the process) and outcome (ok: acknowledged; invalid: refused for its changes; error: the write path could not take it).',
      type: 'counter',
      values: () => INGEST_VIAS.flatMap((via, v) => INGEST_OUTCOMES.map((outcome, o) => ({ labels: { via, outcome }, value: this.batches[v * INGEST_OUTCOMES.length + o]! }))),
    });
    registerLazyMetric(registry, {
      name: 'odds_ingest_changes_applied_total',
      help: 'Changes applied through the write path, by kind (the change op; a price change that suspends a row counts as suspend).',
      type: 'counter',
      values: () => APPLIED_KINDS.map((kind, i) => ({ labels: { kind }, value: appliedByKind[i]! })),
    });
    this.ack = new LazyHistogram(registry, 'odds_ingest_ack_seconds', 'Time from receiving an ingest batch to acknowledging it (decoded, validated, durable, applied).', LATENCY_BOUNDS);
    this.fsync = new LazyHistogram(registry, 'odds_log_fsync_seconds', 'Duration of the batch log group-commit fsyncs.', LATENCY_BOUNDS);
    this.checkpoint = new LazyHistogram(registry, 'odds_checkpoint_duration_seconds', 'Time to encode, write and fsync a checkpoint of the board.', CHECKPOINT_BOUNDS);
    registerLazyMetric(registry, {
      name: 'odds_checkpoint_age_seconds',
      help: 'Seconds since the newest checkpoint was written (by this process, or the one a restore read); absent when there is none.',
      type: 'gauge',
      values: () => (this.lastCheckpointAt < 0 ? [] : [{ labels: {}, value: Math.max(0, now() - this.lastCheckpointAt) / 1000 }]),
    });
    registerLazyMetric(registry, {
      name: 'odds_checkpoint_size_bytes',
      help: 'Size of the newest checkpoint this process wrote; absent before the first.',
      type: 'gauge',
      values: () => (this.lastCheckpointBytes < 0 ? [] : [{ labels: {}, value: this.lastCheckpointBytes }]),
    });
    registerLazyMetric(registry, {
      name: 'odds_checkpoint_failures_total',
      help: 'Checkpoints that failed to write (a full disk, an I/O error); the previous checkpoint and the log were kept.',
      type: 'counter',
      values: () => [{ labels: {}, value: this.checkpointFailures }],
    });
    if (restore !== null) {
      // what the start did: a checkpoint read and the log after it replayed
      registerLazyMetric(registry, { name: 'odds_restore_duration_seconds', help: 'Time the start took to read the checkpoint and replay the log after it.', type: 'gauge', values: () => [{ labels: {}, value: restore.ms / 1000 }] });
      registerLazyMetric(registry, { name: 'odds_restore_replayed_records', help: 'Log records replayed at start (after the checkpoint).', type: 'gauge', values: () => [{ labels: {}, value: restore.replayedRecords }] });
      registerLazyMetric(registry, { name: 'odds_restore_replayed_changes', help: 'Changes in the log records replayed at start.', type: 'gauge', values: () => [{ labels: {}, value: restore.replayedChanges }] });
      if (restore.checkpoint !== null) {
        try {
          this.lastCheckpointAt = statSync(restore.checkpoint.path).mtimeMs;
        } catch {
          // deleted since: the age is unknown until this process writes one
        }
      }
    }
  }

  readonly batchDone = (via: IngestVia, outcome: IngestOutcome, seconds: number): void => {
    this.batches[VIA_INDEX[via] * INGEST_OUTCOMES.length + OUTCOME_INDEX[outcome]]!++;
    if (outcome === 'ok') this.ack.observe(seconds);
  };

  readonly fsynced = (seconds: number): void => {
    this.fsync.observe(seconds);
  };

  readonly checkpointWritten = (report: CheckpointReport, at: number = Date.now()): void => {
    this.checkpoint.observe(report.ms / 1000);
    this.lastCheckpointAt = at;
    this.lastCheckpointBytes = report.bytes;
  };

  readonly checkpointFailed = (): void => {
    this.checkpointFailures++;
  };
}
