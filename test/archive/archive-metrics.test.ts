// The tick archive's metrics on /metrics (docs/archive.md) follow a failure injected
// through the storage seam under the archive's writes (as under the log's): an ENOSPC on
// the rename of a flush's file moves odds_archive_flush_failures_total, leaves the lag
// where it was and no file; the next flush clears the lag and the files and bytes appear.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { FaultyStorage } from '../../persistence/log/storageFaults.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { httpRequest } from '../helpers/server.ts';
import { parsePrometheus, type Exposition } from '../helpers/prometheus.ts';

let t: TestApp;
let archiveDir: string;
const storage = new FaultyStorage(null);

before(async () => {
  archiveDir = mkdtempSync(join(tmpdir(), 'odds-archive-metrics-'));
  t = await startTestApp({ dataDir: true, storage, env: { ARCHIVE_DIR: archiveDir, ARCHIVE_INTERVAL_MS: '3600000' } });
});

after(async () => {
  await t?.close();
  rmSync(archiveDir, { recursive: true, force: true });
});

async function scrape(): Promise<Exposition> {
  // /metrics is served on the ingest port (docs/operations.md)
  const reply = await httpRequest(t.app.durable!.listener.port, '/metrics');
  assert.equal(reply.status, 200);
  return parsePrometheus(reply.body.toString());
}

test('an injected ENOSPC on the archive moves the failure counter; the lag holds until the next flush clears it', async () => {
  const archive = t.app.durable!.archive!;
  await archive.flush();
  const ids = [0, 1, 2].map((slot) => t.app.engine.idOf(slot));
  const before = await scrape();
  assert.equal(before.types.get('odds_archive_flush_failures_total'), 'counter');
  assert.equal(before.value('odds_archive_flush_failures_total'), 0);
  assert.equal(before.value('odds_archive_lag_records'), 0);
  assert.equal(before.value('odds_archive_lag_seconds'), 0);
  for (let n = 0; n < 3; n++) {
    t.clock.advance(1000);
    await t.app.durable!.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: 150 + n * 10 + r })));
  }
  const waiting = await scrape();
  assert.equal(waiting.value('odds_archive_lag_records'), 3);
  assert.ok(waiting.value('odds_archive_lag_seconds')! >= 0);

  storage.arm({ op: 'rename', nth: 1, kind: 'ENOSPC' });
  await assert.rejects(archive.flush());
  const failed = await scrape();
  assert.equal(failed.value('odds_archive_flush_failures_total'), 1);
  assert.equal(failed.value('odds_archive_lag_records'), 3);
  assert.equal(failed.value('odds_archive_files'), 0);
  assert.equal(failed.value('odds_archive_flushed_records_total'), 0);
  const through = failed.value('odds_archive_archived_through_record')!;

  await new Promise((resolve) => setTimeout(resolve, 1100)); // past the files-and-bytes memo
  const report = await archive.flush();
  assert.equal(report?.records, 3);
  const after = await scrape();
  assert.equal(after.value('odds_archive_flush_failures_total'), 1);
  assert.equal(after.value('odds_archive_lag_records'), 0);
  assert.equal(after.value('odds_archive_lag_seconds'), 0);
  assert.equal(after.value('odds_archive_archived_through_record'), through + 3);
  assert.equal(after.value('odds_archive_flushed_records_total'), 3);
  assert.ok(after.value('odds_archive_files')! >= 1);
  assert.ok(after.value('odds_archive_bytes')! > 0);
});
