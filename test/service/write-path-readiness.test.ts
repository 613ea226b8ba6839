// After the log's fsync fails (an EIO through the storage seam under the real server's
// log, persistence/log/storageFaults.ts), the write path is stopped until a restart: the
// ingest port's /readyz answers 503 naming the "writePath" check (since when, the
// error, restart to recover), the public port's /readyz stays 200 and names it in its
// body, reads keep being answered, /metrics says odds_write_path_failed 1 with the time,
// and one error line is logged however many batches are refused after. A restart on the
// same DATA_DIR is ready on both ports and holds every acknowledged batch.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { FaultyStorage } from '../../persistence/log/storageFaults.ts';
import { startApp, type App } from '../../service/app.ts';
import { createLogger } from '../../service/logger.ts';
import { Operations } from '../../service/operations.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { parsePrometheus } from '../helpers/prometheus.ts';
import { httpRequest, type HttpReply } from '../helpers/server.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';

const TOKEN = 'write-path-readiness-token';
/** The page the test reads its row from (the order does not depend on prices). */
const PAGE = '/api/v1/odds?league=nba&limit=5';
const json = (reply: HttpReply) => JSON.parse(reply.body.toString()) as Record<string, any>;
const dir = mkdtempSync(join(tmpdir(), 'odds-writepath-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function start(storage: FaultyStorage | undefined, lines: string[]): Promise<{ app: App; ingestPort: number }> {
  const app = await startApp({
    clock: new ManualClock(NOW),
    board: testBoard(),
    dataDir: join(dir, 'data'),
    ingestPort: 0,
    host: '127.0.0.1',
    port: 0,
    env: { INGEST_TOKEN: TOKEN, SHUTDOWN_GRACE_MS: '0', CHECKPOINT_INTERVAL_MS: '0' },
    operations: new Operations(),
    logger: createLogger('info', { write: (line: string) => void lines.push(line) }),
    log: () => {},
    storage,
  });
  return { app, ingestPort: app.durable!.listener.port };
}

const metric = async (port: number) => parsePrometheus((await httpRequest(port, '/metrics')).body.toString());
const priceOf = async (app: App, id: string) => {
  const reply = await httpRequest(app.port, PAGE);
  assert.equal(reply.status, 200, reply.body.toString());
  return (json(reply).data as { id: string; priceAmerican: number }[]).find((row) => row.id === id)?.priceAmerican;
};

test('a failed fsync: the ingest port is not ready (since, error, restart), the public port serves reads and says why, a gauge and one log line; a restart is ready with every acknowledged batch', async () => {
  const storage = new FaultyStorage(null);
  const lines: string[] = [];
  const { app, ingestPort } = await start(storage, lines);
  let restarted: App | null = null;
  try {
    const first = await httpRequest(app.port, PAGE);
    const id = (json(first).data as { id: string; priceAmerican: number | null }[]).find((row) => row.priceAmerican !== null)!.id;

    // healthy: both ports ready, the check says ok, the gauge 0
    assert.equal((await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id, priceAmerican: -131 }]))).status, 200);
    for (const port of [ingestPort, app.port]) {
      const ready = await httpRequest(port, '/readyz');
      assert.equal(ready.status, 200, `port ${port}`);
      assert.equal(json(ready).checks.writePath, 'ok');
      assert.deepEqual(json(ready).writePath, { state: 'ok' });
    }
    const healthy = await metric(ingestPort);
    assert.equal(healthy.value('odds_write_path_failed'), 0);
    assert.equal(healthy.value('odds_write_path_failed_since_seconds'), undefined);

    // the next group's fsync fails with EIO
    storage.arm({ op: 'fsync', nth: 1, kind: 'EIO' });
    const before = Date.now();
    const refused = await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id, priceAmerican: -142 }]));
    assert.equal(refused.status, 503);
    assert.equal(refused.body.code, 'log_unavailable');
    const later = await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id, priceAmerican: -153 }]));
    assert.equal(later.status, 503, 'the log is not retried: every later batch is refused too');

    // the ingest port: 503 not_ready naming the write path, when, the error and what to do
    const ingestReady = await httpRequest(ingestPort, '/readyz');
    assert.equal(ingestReady.status, 503);
    const body = json(ingestReady);
    assert.equal(body.code, 'not_ready');
    assert.match(body.detail, /writePath: failed since \d{4}-\d\d-\d\dT[\d:.]+Z .*EIO.*restart the process to recover/);
    assert.equal(body.checks.board, 'ok');
    assert.equal(body.writePath.state, 'failed');
    assert.match(body.writePath.error, /EIO/);
    assert.match(body.writePath.what, /fsync of log segment .*wal-\d+.* failed \(never retried\)/);
    assert.match(body.writePath.action, /^restart the process to recover/);
    assert.equal(body.writePath.durableIndex, 1, 'the one acknowledged batch is durable');
    const since = Date.parse(body.writePath.since);
    assert.ok(since >= before - 1000 && since <= Date.now(), body.writePath.since);

    // the public port: still ready (reads are served), naming the failed check
    const publicReady = await httpRequest(app.port, '/readyz');
    assert.equal(publicReady.status, 200);
    assert.equal(json(publicReady).status, 'ready');
    assert.match(json(publicReady).checks.writePath, /^failed since .*restart the process to recover/);
    assert.deepEqual(json(publicReady).writePath, body.writePath);
    assert.equal(await priceOf(app, id), -131, 'reads answer the acknowledged state');

    const failed = await metric(ingestPort);
    assert.equal(failed.value('odds_write_path_failed'), 1);
    assert.equal(failed.value('odds_write_path_failed_since_seconds'), since / 1000);

    const said = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((line) => line.event === 'write_path_failed');
    assert.equal(said.length, 1, 'one line, however many batches were refused');
    assert.equal(said[0]!.level, 50, 'logged at error level');
    assert.match(said[0]!.error, /EIO/);
    assert.match(said[0]!.action, /^restart the process/);
    assert.equal(said[0]!.since, body.writePath.since);

    // SIGTERM's path: no last checkpoint over a log that failed is required to succeed, the close must not throw
    await app.close().catch(() => {});
    restarted = (await start(undefined, [])).app;
    const restartedIngest = restarted.durable!.listener.port;
    for (const port of [restartedIngest, restarted.port]) assert.equal((await httpRequest(port, '/readyz')).status, 200, `port ${port} after the restart`);
    assert.equal(restarted.durable!.durable.ingest.appliedIndex, 1);
    assert.equal(await priceOf(restarted, id), -131, 'the acknowledged batch, not the refused ones');
    assert.equal((await metric(restartedIngest)).value('odds_write_path_failed'), 0);
    assert.equal((await postBatch(restartedIngest, TOKEN, ndjson([{ op: 'price', id, priceAmerican: -164 }]))).status, 200);
  } finally {
    await app.close().catch(() => {});
    await restarted?.close();
  }
});
