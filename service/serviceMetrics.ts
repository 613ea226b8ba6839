// The process's own metrics beside the HTTP ones (http/metrics.ts), all read lazily at
// scrape time or counted into typed arrays:
//
//   odds_live_rows                         gauge    live odds rows on the board
//   odds_board_seq                         gauge    the board's change sequence
//   odds_board_updates_total{kind}         counter  row changes applied: insert, update, price, remove
//   odds_snapshot_refreshes_total{variant} counter  snapshot body refreshes
//   odds_snapshot_refresh_seconds_total{variant}    time spent in them (rate over the
//                                                   refreshes' rate: the mean duration)
//
// WritePathMetrics holds the write path's (ingest batches, their acknowledgement
// latency, log fsyncs, checkpoints); the composition root creates it when it builds the
// write path.
import type { Registry } from 'prom-client';
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine/engine.ts';
import type { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import { LazyHistogram, registerLazyMetric } from '../http/metricsCollector.ts';

const KINDS: readonly ChangeKind[] = ['insert', 'update', 'price', 'remove'];
const KIND_INDEX: Readonly<Record<ChangeKind, number>> = { insert: 0, update: 1, price: 2, remove: 3 };

/** Counts the engine's row changes by kind (an engine listener). */
export class UpdateCounter implements ChangeListener {
  readonly counts = new Float64Array(KINDS.length);
  rowChanged(_slot: number, kind: ChangeKind): void {
    this.counts[KIND_INDEX[kind]]!++;
  }
}

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
}

const LATENCY_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const CHECKPOINT_BOUNDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The write path's metrics; its parts call these as batches, fsyncs and checkpoints happen. */
export class WritePathMetrics {
  private readonly batches = new Float64Array(2);
  private readonly ack: LazyHistogram;
  private readonly fsync: LazyHistogram;
  private readonly checkpoint: LazyHistogram;
  private lastCheckpointAt = -1;

  constructor(registry: Registry, now: () => number) {
    registerLazyMetric(registry, {
      name: 'odds_ingest_batches_total',
      help: 'Ingest batches, by outcome: applied (acknowledged) or refused.',
      type: 'counter',
      values: () => [
        { labels: { outcome: 'applied' }, value: this.batches[0]! },
        { labels: { outcome: 'refused' }, value: this.batches[1]! },
      ],
    });
    this.ack = new LazyHistogram(registry, 'odds_ingest_ack_seconds', 'Time from receiving an ingest batch to acknowledging it (validated, durable, applied).', LATENCY_BOUNDS);
    this.fsync = new LazyHistogram(registry, 'odds_log_fsync_seconds', 'Duration of the batch log group-commit fsyncs.', LATENCY_BOUNDS);
    this.checkpoint = new LazyHistogram(registry, 'odds_checkpoint_duration_seconds', 'Time to encode and write a checkpoint of the board.', CHECKPOINT_BOUNDS);
    registerLazyMetric(registry, {
      name: 'odds_checkpoint_age_seconds',
      help: 'Seconds since the last checkpoint was written (absent before the first).',
      type: 'gauge',
      values: () => (this.lastCheckpointAt < 0 ? [] : [{ labels: {}, value: (now() - this.lastCheckpointAt) / 1000 }]),
    });
  }

  batchApplied(seconds: number): void {
    this.batches[0]!++;
    this.ack.observe(seconds);
  }

  batchRefused(): void {
    this.batches[1]!++;
  }

  fsynced(seconds: number): void {
    this.fsync.observe(seconds);
  }

  checkpointWritten(seconds: number, at: number): void {
    this.checkpoint.observe(seconds);
    this.lastCheckpointAt = at;
  }
}
