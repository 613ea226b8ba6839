// The LOG=nats writer when a publish fails (its real nats-server killed under it): the
// batch is answered 503 log_unavailable and the log refuses every later one until a
// restart; the ingest port's /readyz answers 503 naming the "writePath" check (since,
// the error, restart to recover), the public port's stays 200 and reads go on, and
// /metrics says odds_write_path_failed 1 (service/writePathHealth.ts).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { startApp, type App } from '../../service/app.ts';
import { createLogger } from '../../service/logger.ts';
import { Operations } from '../../service/operations.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { parsePrometheus } from '../helpers/prometheus.ts';
import { httpRequest } from '../helpers/server.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { tempDir } from './replica-helpers.ts';

const TOKEN = 'nats-writer-write-path';

describe('a LOG=nats writer whose publish fails', { timeout: 90_000 }, () => {
  const dir = tempDir('nats-writepath-');
  let nats: NatsTestServer;
  let app: App | null = null;
  const lines: string[] = [];
  before(async () => {
    nats = await startNatsServer();
    app = await startApp({
      clock: new ManualClock(NOW),
      board: testBoard(),
      dataDir: join(dir, 'data'),
      ingestPort: 0,
      host: '127.0.0.1',
      port: 0,
      env: { LOG: 'nats', ROLE: 'writer', NATS_URL: nats.url, REPLICA_ID: 'writer', INGEST_TOKEN: TOKEN, CHECKPOINT_INTERVAL_MS: '0', WAL_FSYNC: '0', SHUTDOWN_GRACE_MS: '0' },
      operations: new Operations(),
      logger: createLogger('info', { write: (line: string) => void lines.push(line) }),
      log: () => {},
    });
  });
  after(async () => {
    // the writer closes over a running server (a close with none would wait on its reconnects)
    await nats.restart().catch(() => {});
    await app?.close().catch(() => {});
    await nats.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses batches from then on, and says so on the ingest port\'s /readyz (503) and in /metrics, while the public port stays ready and serves reads', async () => {
    const writer = app!;
    const ingestPort = writer.replicated!.listenerPort()!;
    const page = JSON.parse((await httpRequest(writer.port, '/api/v1/odds?league=nba&limit=5')).body.toString()) as { data: { id: string; priceAmerican: number | null }[] };
    const id = page.data.find((row) => row.priceAmerican !== null)!.id;
    assert.equal((await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id, priceAmerican: 217 }]))).status, 200);
    assert.equal((await httpRequest(ingestPort, '/readyz')).status, 200);

    await nats.kill();
    const refused = await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id, priceAmerican: 228 }]));
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'log_unavailable');

    const ready = await httpRequest(ingestPort, '/readyz');
    assert.equal(ready.status, 503);
    const body = JSON.parse(ready.body.toString()) as Record<string, any>;
    assert.match(body.detail, /writePath: failed since .*publishing to JetStream stream ODDS failed.*restart the process to recover/);
    assert.equal(body.writePath.state, 'failed');
    assert.ok(typeof body.writePath.error === 'string' && body.writePath.error.length > 0, 'the client\'s error (a timeout while the server is gone)');
    assert.match(body.writePath.what, /^publishing to JetStream stream ODDS failed$/);
    assert.equal(body.writer.role, 'writer', 'the writer check itself still reports its figures');

    const publicReady = await httpRequest(writer.port, '/readyz');
    assert.equal(publicReady.status, 200);
    assert.match(JSON.parse(publicReady.body.toString()).checks.writePath, /^failed since /);
    const after = JSON.parse((await httpRequest(writer.port, '/api/v1/odds?league=nba&limit=5')).body.toString()) as { data: { id: string; priceAmerican: number }[] };
    assert.equal(after.data.find((row) => row.id === id)?.priceAmerican, 217, 'reads answer the acknowledged state');

    const metrics = parsePrometheus((await httpRequest(ingestPort, '/metrics')).body.toString());
    assert.equal(metrics.value('odds_write_path_failed'), 1);
    assert.equal(lines.filter((line) => line.includes('"event":"write_path_failed"')).length, 1, 'one log line');

    // with the server back, the log still refuses: only a restart re-reads what the stream holds
    await nats.restart();
    assert.equal((await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id, priceAmerican: 239 }]))).status, 503);
  });
});
