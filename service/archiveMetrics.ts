// The tick archive's metrics (docs/archive.md), read from the archive when /metrics is
// scraped (the archive does not know prom-client):
//
//   odds_archive_archived_through_record  gauge    the last log record whose changes are all in archive files
//   odds_archive_lag_records              gauge    records acknowledged but not yet in a file
//   odds_archive_lag_seconds              gauge    how long the oldest of them has waited (at most), 0 when none
//   odds_archive_flush_failures_total     counter  flushes that failed (the log keeps the records; retried)
//   odds_archive_flushed_records_total    counter  records written to archive files by this process
//   odds_archive_files                    gauge    Parquet files in ARCHIVE_DIR
//   odds_archive_bytes                    gauge    their bytes
import type { Registry } from 'prom-client';
import { registerLazyMetric } from '../http/metricsCollector.ts';
import type { TickArchive } from '../persistence/archive/tickArchive.ts';

export function registerArchiveMetrics(registry: Registry, archive: TickArchive): void {
  let flushedRecords = 0;
  const previous = archive.onFlush;
  archive.onFlush = (report) => {
    flushedRecords += report.records;
    previous?.(report);
  };
  const one = (value: number) => [{ labels: {}, value }];
  registerLazyMetric(registry, { name: 'odds_archive_archived_through_record', help: 'The last write-ahead log record whose changes are all in tick archive files.', type: 'gauge', values: () => one(archive.archivedThrough) });
  registerLazyMetric(registry, { name: 'odds_archive_lag_records', help: 'Log records acknowledged but not yet in a tick archive file (the log keeps them).', type: 'gauge', values: () => one(archive.pendingRecords) });
  registerLazyMetric(registry, { name: 'odds_archive_lag_seconds', help: 'How long the oldest log record not yet in a tick archive file has waited (at most); 0 when none waits.', type: 'gauge', values: () => one(archive.lagSeconds()) });
  registerLazyMetric(registry, { name: 'odds_archive_flush_failures_total', help: 'Tick archive flushes that failed (a full disk, an I/O error, a file that read back wrong): nothing is lost, the log keeps the records and the next flush retries.', type: 'counter', values: () => one(archive.failures) });
  registerLazyMetric(registry, { name: 'odds_archive_flushed_records_total', help: 'Log records written to tick archive files by this process.', type: 'counter', values: () => one(flushedRecords) });
  registerLazyMetric(registry, { name: 'odds_archive_files', help: 'Parquet files in ARCHIVE_DIR.', type: 'gauge', values: () => one(archive.size().files) });
  registerLazyMetric(registry, { name: 'odds_archive_bytes', help: 'Bytes of the Parquet files in ARCHIVE_DIR.', type: 'gauge', values: () => one(archive.size().bytes) });
}
