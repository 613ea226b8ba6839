// /readyz of a replica over a real nats-server: a replica that has not applied what the
// stream holds beyond REPLICA_MAX_LAG answers 503 not_ready naming its lag; once it
// follows and caught up it answers 200 with the lag (0) and the record it applied.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { Replica } from '../../ingest/replica.ts';
import { NatsCheckpointStore } from '../../persistence/nats/natsCheckpoints.ts';
import { openBoardStream } from '../../persistence/nats/natsStream.ts';
import { createServer, type RunningServer } from '../../http/server.ts';
import { healthRoutes, Readiness } from '../../http/routes/health.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { httpRequest } from '../helpers/server.ts';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { openCold, openWriter, randomBatch, seededRandom, STREAM, tempDir, type WriterNode } from './replica-helpers.ts';

describe('/readyz of a replica', () => {
  const clock = new ManualClock(NOW);
  const board = testBoard('small');
  const dirs = [tempDir('ready-writer-'), tempDir('ready-replica-')];
  let nats: NatsTestServer;
  let writer: WriterNode;
  let nc: NatsConnection;
  let replica: Replica;
  let server: RunningServer;

  before(async () => {
    nats = await startNatsServer();
    writer = await openWriter(nats.url, dirs[0]!, clock, board);
    nc = await connect({ servers: nats.url });
    const cold = openCold(dirs[1]!, board, clock);
    replica = await Replica.open({ board: await openBoardStream(nc, { stream: STREAM, manage: false }), checkpoints: await NatsCheckpointStore.open(nc, { stream: STREAM }), dataDir: dirs[1]!, clock, cold, fsync: false, warn: () => {} });
    const readiness = new Readiness();
    readiness.probe('replica', () => replica.readiness(5));
    server = await createServer({ routes: healthRoutes(readiness), openapi: false, port: 0 });
  });
  after(async () => {
    await server?.close();
    await replica?.close();
    await nc?.close();
    await writer?.close();
    await nats?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('503 with the lag while more records than the threshold wait; 200 with the lag once caught up', async () => {
    const random = seededRandom(3);
    for (let i = 0; i < 12; i++) await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 5));
    // not following yet: it learns the stream's end by reading it
    assert.equal(await replica.measureLag(), 12);
    const behind = await httpRequest(server.port, '/readyz');
    assert.equal(behind.status, 503);
    const error = JSON.parse(behind.body.toString()) as { code: string; detail: string };
    assert.equal(error.code, 'not_ready');
    assert.match(error.detail, /replica: catching up: 12 records behind the stream \(more than REPLICA_MAX_LAG=5\)/);

    await replica.follow();
    assert.ok(await replica.caughtUpTo(writer.writer.ingest.appliedIndex));
    assert.equal(await replica.measureLag(), 0);
    const ready = await httpRequest(server.port, '/readyz');
    assert.equal(ready.status, 200, ready.body.toString());
    assert.deepEqual(JSON.parse(ready.body.toString()), { status: 'ready', checks: { replica: 'ok' }, replica: { role: 'replica', applied: 12, lag: 0 } });
  });
});
