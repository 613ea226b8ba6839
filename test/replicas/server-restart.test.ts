// SIGKILL of nats-server itself: JetStream restarts on its store, the writer's and the
// replica's connections reconnect, every acknowledged record is still in the stream,
// the writer's log continues at the next index and the replica (its ordered consumer
// recreated by the client) keeps following to the same seq.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { lastCommit } from '../../persistence/nats/natsStream.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { openReplica, openWriter, randomBatch, seededRandom, tempDir, type ReplicaNode, type WriterNode } from './replica-helpers.ts';

describe('nats-server killed and restarted under a writer and a replica', () => {
  const clock = new ManualClock(NOW);
  const board = testBoard('small');
  const random = seededRandom(21);
  const removed = new Set<string>();
  const dirs = [tempDir('srv-writer-'), tempDir('srv-replica-')];
  let nats: NatsTestServer;
  let writer: WriterNode;
  let replica: ReplicaNode;

  before(async () => {
    nats = await startNatsServer();
    writer = await openWriter(nats.url, dirs[0], clock, board);
    replica = await openReplica(nats.url, dirs[1], clock, board);
  });
  after(async () => {
    await replica?.close().catch(() => {});
    await writer?.close().catch(() => {});
    await nats?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('every acknowledged record survives; the log continues and the replica follows on', async () => {
    for (let i = 0; i < 30; i++) await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 1 + Math.floor(random() * 20), removed));
    assert.ok(await replica.replica.caughtUpTo(30));
    await nats.kill();
    await nats.restart();
    // the clients reconnect on their own; the stream still ends at record 30
    assert.ok(await eventually(async () => (await lastCommit(writer.writer.log.board).catch(() => ({ index: -1 }))).index === 30, 30_000));
    for (let i = 0; i < 10; i++) await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 1 + Math.floor(random() * 20), removed));
    assert.equal(writer.writer.ingest.appliedIndex, 40);
    assert.ok(await replica.replica.caughtUpTo(40), `the replica stopped at ${replica.replica.appliedIndex}: ${replica.replica.stale?.message ?? ''}`);
    assert.equal(replica.replica.engine.seq, writer.writer.engine.seq);
  });
});
