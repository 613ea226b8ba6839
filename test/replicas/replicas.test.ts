// One writer and two replicas in this process over a real nats-server (JetStream in a
// temp dir), each node with its own engine, DATA_DIR and SQLite file. The writer loads
// the fixture board and checkpoints it to the object store; the replicas start with
// empty disks and bootstrap from there. After random ingest every node serves the same
// bytes and ETags at the same seq (snapshot with history, /odds pages, the delta feed,
// /edges, /arbitrage, /status); a batch over 1 MiB goes through whole; a restarted
// replica resumes from its own checkpoint; a new replica starts from the writer's newest
// checkpoint; a replica whose checkpoint the stream's retention left behind
// re-bootstraps from the object store; when retention expired every record the log
// continues after the newest checkpoint.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { encodeRecord, decodeRecord } from '../../ingest/record.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { replayStream } from '../../persistence/nats/natsBatchLog.ts';
import {
  assertSameServed, openReplica, openWriter, randomBatch, seededRandom, serveEngine, STREAM, tempDir,
  type ReplicaNode, type WriterNode,
} from './replica-helpers.ts';

const board = testBoard('small');

describe('a writer and two replicas over JetStream', () => {
  const clock = new ManualClock(NOW);
  const random = seededRandom(16);
  const removed = new Set<string>();
  const dirs: string[] = [];
  const dir = (name: string) => {
    const made = tempDir(`replica-${name}-`);
    dirs.push(made);
    return made;
  };
  let nats: NatsTestServer;
  let writer: WriterNode;
  const replicas: ReplicaNode[] = [];

  before(async () => {
    nats = await startNatsServer();
    writer = await openWriter(nats.url, dir('writer'), clock, board);
    assert.equal(writer.writer.fresh, true);
    for (let i = 0; i < 2; i++) replicas.push(await openReplica(nats.url, dir(`r${i}`), clock, board));
  });
  after(async () => {
    for (const node of replicas) await node.close().catch(() => {});
    await writer?.close().catch(() => {});
    await nats?.dispose();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  /** Submits `batches` random batches, 4 in flight, the clock moving between them. */
  async function ingestRandom(batches: number, maxSize = 40): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < batches) {
        next++;
        clock.advance(1 + Math.floor(random() * 500));
        await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 1 + Math.floor(random() * maxSize), removed));
      }
    };
    await Promise.all([lane(), lane(), lane(), lane()]);
  }

  async function assertAllAgree(nodes: ReplicaNode[] = replicas): Promise<void> {
    const target = writer.writer.ingest.appliedIndex;
    for (const node of nodes) assert.ok(await node.replica.caughtUpTo(target), `a replica stopped at ${node.replica.appliedIndex} of ${target}: ${node.replica.stale?.message ?? ''}`);
    const reference = await serveEngine(writer.writer.engine, clock, board, join(writer.dataDir, 'odds.db'));
    for (const [i, node] of nodes.entries()) {
      assert.equal(node.replica.appliedIndex, target);
      assert.equal(await node.replica.measureLag(), 0);
      assertSameServed(reference, await serveEngine(node.replica.engine, clock, board, join(node.dataDir, 'odds.db')), `replica ${i}`);
    }
  }

  it('replicas with empty disks bootstrap from the checkpoint in the object store', () => {
    for (const node of replicas) {
      assert.equal(node.replica.restore.source, 'object store');
      assert.equal(node.replica.restore.checkpointIndex, 0);
      assert.equal(node.replica.engine.seq, writer.writer.engine.seq);
    }
  });

  it('after random ingest every node serves the same bytes and ETags at the same seq', async () => {
    const seqBefore = writer.writer.engine.seq;
    await ingestRandom(150);
    assert.equal(writer.writer.ingest.appliedIndex, 150);
    assert.ok(writer.writer.engine.seq > seqBefore);
    await assertAllAgree();
  });

  it('a batch larger than the server message size goes through whole (chunked) and in order', async () => {
    const changes = randomBatch(writer.writer.engine, random, 30_000, removed).filter((c) => (c as { op: string }).op === 'price');
    const payloadBytes = encodeRecord({ time: clock.now(), changes: changes as never }).length;
    assert.ok(payloadBytes > 1024 * 1024, `the batch is ${payloadBytes} bytes`);
    clock.advance(1000);
    const big = writer.writer.ingest.submit(changes);
    const small = writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 3, removed)); // behind it in the log
    const [bigResult, smallResult] = await Promise.all([big, small]);
    assert.equal(smallResult.index, bigResult.index + 1);
    const info = await writer.writer.log.board.jsm.streams.info(STREAM, { subjects_filter: '>' });
    assert.ok((info.state.subjects?.['odds.main.parts'] ?? 0) >= 2, 'the record was published in parts');
    await assertAllAgree();
    // read back from the stream: the reassembled record is the batch as logged
    let seen = 0;
    await replayStream(writer.writer.log.board, bigResult.index, bigResult.index, ({ payload }) => {
      seen++;
      assert.equal(decodeRecord(payload).changes.length, changes.length);
    });
    assert.equal(seen, 1);
  });

  it('a replica restarted on its own disk resumes from its own checkpoint', async () => {
    const node = replicas[0];
    const checkpoint = node.replica.checkpointNow();
    await node.close();
    await ingestRandom(40);
    replicas[0] = await openReplica(nats.url, node.dataDir, clock, board);
    const restarted = replicas[0].replica.restore;
    assert.equal(restarted.source, 'local');
    assert.equal(restarted.checkpointIndex, checkpoint.logIndex);
    assert.equal(restarted.replayedRecords, 40);
    await assertAllAgree();
  });

  it('a new replica with an empty disk starts from the newest checkpoint in the object store', async () => {
    await ingestRandom(20);
    const stored = await writer.writer.checkpointNow();
    assert.ok(stored !== null && stored.logIndex === writer.writer.ingest.appliedIndex);
    await ingestRandom(15);
    const fresh = await openReplica(nats.url, dir('r-new'), clock, board);
    replicas.push(fresh);
    assert.equal(fresh.replica.restore.source, 'object store');
    assert.equal(fresh.replica.restore.checkpointIndex, stored.logIndex);
    assert.equal(fresh.replica.restore.replayedRecords, 15);
    await assertAllAgree();
  });

  it('a replica whose checkpoint fell behind the stream retention re-bootstraps from the object store', async () => {
    const node = replicas[1];
    const own = node.replica.checkpointNow();
    await node.close();
    await ingestRandom(25);
    const stored = (await writer.writer.checkpointNow())!;
    await ingestRandom(10);
    // retention drops everything up to and including the commit of the stored checkpoint's record
    const jsm = writer.writer.log.board.jsm;
    const purged = await jsm.streams.purge(STREAM, { seq: stored.streamSeq + 1 });
    assert.ok(purged.purged > 0);
    replicas[1] = await openReplica(nats.url, node.dataDir, clock, board);
    const restore = replicas[1].replica.restore;
    assert.ok(own.logIndex < stored.logIndex);
    assert.equal(restore.source, 'object store');
    assert.equal(restore.checkpointIndex, stored.logIndex);
    assert.equal(restore.replayedRecords, 10);
    await assertAllAgree();
  });

  it('the writer restarted on its disk continues the log at the next index', async () => {
    const last = writer.writer.ingest.appliedIndex;
    const seq = writer.writer.engine.seq;
    await writer.close();
    writer = await openWriter(nats.url, writer.dataDir, clock, board);
    assert.equal(writer.writer.fresh, false);
    assert.equal(writer.writer.ingest.appliedIndex, last);
    assert.equal(writer.writer.engine.seq, seq);
    clock.advance(1000);
    const result = await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 5, removed));
    assert.equal(result.index, last + 1);
    await assertAllAgree();
  });

  it('when retention expired every record, the newest checkpoint is the state and the log continues after it', async () => {
    const node = replicas[1];
    node.replica.checkpointNow();
    await node.close();
    await ingestRandom(12);
    const stored = (await writer.writer.checkpointNow())!;
    const jsm = writer.writer.log.board.jsm;
    await jsm.streams.purge(STREAM); // what max_age does to a board quiet for longer than it
    await writer.close();
    writer = await openWriter(nats.url, writer.dataDir, clock, board);
    assert.equal(writer.writer.ingest.appliedIndex, stored.logIndex);
    // a replica whose own checkpoint is older than the stored one cannot resume from it
    replicas[1] = await openReplica(nats.url, node.dataDir, clock, board);
    assert.equal(replicas[1].replica.restore.source, 'object store');
    assert.equal(replicas[1].replica.restore.checkpointIndex, stored.logIndex);
    clock.advance(1000);
    const result = await writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 5, removed));
    assert.equal(result.index, stored.logIndex + 1);
    await assertAllAgree();
  });
});
