// Checkpoints of a replicated board over a real nats-server: the writer's checkpoint
// after one that found nothing new still takes the next one (to disk and the object
// store), and a replica's background checkpoint lands in its DATA_DIR with the stream
// position it resumes after.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { listCheckpoints } from '../../persistence/log/checkpointFiles.ts';
import { readStreamPosition } from '../../persistence/nats/natsCheckpoints.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { openReplica, openWriter, randomBatch, seededRandom, tempDir, type ReplicaNode, type WriterNode } from './replica-helpers.ts';

describe('checkpoints of the writer and of a replica', () => {
  const clock = new ManualClock(NOW);
  const board = testBoard('small');
  const dirs = [tempDir('ckpt-writer-'), tempDir('ckpt-replica-')];
  let nats: NatsTestServer;
  let writer: WriterNode;
  let replica: ReplicaNode;

  before(async () => {
    nats = await startNatsServer();
    writer = await openWriter(nats.url, dirs[0]!, clock, board);
    replica = await openReplica(nats.url, dirs[1]!, clock, board);
  });
  after(async () => {
    await replica?.close();
    await writer?.close();
    await nats?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('the writer checkpoints again after a call that found nothing new', async () => {
    assert.equal(await writer.writer.checkpointNow(), null, 'nothing since the first checkpoint');
    const random = seededRandom(5);
    for (let i = 0; i < 3; i++) await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 10));
    const taken = await writer.writer.checkpointNow();
    assert.equal(taken?.logIndex, 3);
    assert.deepEqual(listCheckpoints(dirs[0]!).map((file) => file.logIndex), [3]);
  });

  it("a replica's background checkpoint holds what it applied, with its stream position", async () => {
    assert.ok(await replica.replica.caughtUpTo(3));
    const written = await replica.replica.checkpointInBackground();
    assert.equal(written.logIndex, 3);
    assert.deepEqual(listCheckpoints(dirs[1]!).map((file) => file.logIndex), [3]);
    assert.ok((readStreamPosition(dirs[1]!, 3) ?? 0) >= 3);
  });
});
