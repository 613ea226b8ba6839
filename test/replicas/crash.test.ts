// SIGKILL of a replica process and of the writer process over a real nats-server.
//
// A replica child follows the stream while this process ingests; it is killed mid-
// stream, restarted on its disk, resumes from its own checkpoint, catches up and then
// serves the same bytes as the writer at the same seq.
//
// A writer child ingests at full speed (4 batches in flight, some published in parts)
// and is killed mid-publish; the writer reopened here holds every batch the child had
// acknowledged, the stream holds records 1..N each exactly once with no gap, the
// reopened writer applied each once (its seq equals a replica's that followed the whole
// time) and the log continues at N + 1.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import { ManualClock } from '../../engine/clock.ts';
import { headerInt, HEADER_INDEX } from '../../persistence/nats/natsStream.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import {
  assertSameServed, fetchServed, openReplica, openWriter, randomBatch, seededRandom, serveEngine, STREAM, tempDir,
  type ReplicaNode, type WriterNode,
} from './replica-helpers.ts';

const board = testBoard('small');

interface Child {
  process: ChildProcess;
  lines: string[][];
  exited: Promise<void>;
  stderr(): string;
}

function spawnChild(role: 'replica' | 'writer', url: string, dataDir: string, now: number): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/replicas/nodeChild.ts', role, url, dataDir, String(now)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[][] = [];
  let err = '';
  let buffered = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    for (const line of parts) lines.push(line.split(' '));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { process: child, lines, exited, stderr: () => err };
}

const lastOf = (child: Child, word: string) => {
  for (let i = child.lines.length - 1; i >= 0; i--) if (child.lines[i][0] === word) return child.lines[i];
  return undefined;
};

async function killed(child: Child): Promise<void> {
  child.process.kill('SIGKILL');
  await child.exited;
}

describe('SIGKILL of replica and writer processes', () => {
  const clock = new ManualClock(NOW);
  const random = seededRandom(13);
  const removed = new Set<string>();
  const dirs: string[] = [];
  const dir = (name: string) => {
    const made = tempDir(`replica-crash-${name}-`);
    dirs.push(made);
    return made;
  };
  let nats: NatsTestServer;
  let writer: WriterNode;
  let follower: ReplicaNode;
  const children: Child[] = [];

  before(async () => {
    nats = await startNatsServer();
    writer = await openWriter(nats.url, dir('writer'), clock, board);
    follower = await openReplica(nats.url, dir('follower'), clock, board);
  });
  after(async () => {
    for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) await killed(child);
    await follower?.close().catch(() => {});
    await writer?.close().catch(() => {});
    await nats?.dispose();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  const submitRandom = () => writer.writer.ingest.submit(randomBatch(writer.writer.engine, random, 1 + Math.floor(random() * 30), removed));

  it('a replica killed mid-stream restarts from its own checkpoint, catches up and serves the same bytes', async () => {
    for (let i = 0; i < 20; i++) await submitRandom();
    const replicaDir = dir('child');
    let child = spawnChild('replica', nats.url, replicaDir, clock.now());
    children.push(child);
    assert.ok(await eventually(() => lastOf(child, 'ready') !== undefined, 60_000), `the replica did not start: ${child.stderr()}`);
    assert.equal(lastOf(child, 'ready')!.slice(2).join(' '), 'object store');
    // ingest while it follows; kill it once it has checkpointed and applied some of it
    const killAt = writer.writer.ingest.appliedIndex + 20 + Math.floor(random() * 100);
    let ingesting = true;
    const lanes = [0, 1, 2, 3].map(async () => {
      while (ingesting) await submitRandom();
    });
    assert.ok(await eventually(() => Number(lastOf(child, 'checkpoint')?.[1] ?? 0) >= killAt, 60_000), `the replica did not reach ${killAt}: ${child.stderr()}`);
    await killed(child);
    const killedAt = Number(lastOf(child, 'applied')![1]);
    for (let i = 0; i < 30; i++) await submitRandom();
    ingesting = false;
    await Promise.all(lanes);
    const target = writer.writer.ingest.appliedIndex;
    assert.ok(target > killedAt);

    child = spawnChild('replica', nats.url, replicaDir, clock.now());
    children.push(child);
    assert.ok(await eventually(() => lastOf(child, 'ready') !== undefined, 60_000), `the replica did not restart: ${child.stderr()}`);
    assert.equal(lastOf(child, 'ready')!.slice(2).join(' '), 'local');
    assert.ok(await eventually(() => Number(lastOf(child, 'applied')?.[1] ?? 0) === target, 60_000), `the restarted replica did not catch up to ${target}`);
    const port = Number(lastOf(child, 'ready')![1]);
    assert.equal(Number(lastOf(child, 'applied')![2]), writer.writer.engine.seq);
    const reference = await serveEngine(writer.writer.engine, clock, board, join(writer.dataDir, 'odds.db'));
    assertSameServed(reference, await fetchServed(port, writer.writer.engine.seq), 'restarted replica');
    await killed(child);
  });

  it('the writer killed mid-publish: reopened, it applied every acknowledged batch once and the stream has no gap or repeat', async () => {
    const writerDir = writer.dataDir;
    await writer.close();
    const child = spawnChild('writer', nats.url, writerDir, clock.now());
    children.push(child);
    const killAfter = 60 + Math.floor(random() * 200);
    assert.ok(await eventually(() => child.lines.filter((l) => l[0] === 'ack').length >= killAfter, 120_000), `the writer child stalled: ${child.stderr()}`);
    await killed(child);
    const acks = child.lines.filter((l) => l[0] === 'ack').map((l) => [Number(l[1]), Number(l[2])] as const);
    const maxAcked = Math.max(...acks.map(([index]) => index));
    const maxAckedSeq = Math.max(...acks.map(([, seq]) => seq));

    writer = await openWriter(nats.url, writerDir, clock, board);
    const last = writer.writer.ingest.appliedIndex;
    assert.ok(last >= maxAcked, `the reopened writer is at ${last} but ${maxAcked} was acknowledged`);
    assert.ok(writer.writer.engine.seq >= maxAckedSeq);

    // every commit in the stream, in order: 1..last, each once
    const consumer = await jetstream(writer.nc).consumers.get(STREAM, { filter_subjects: 'odds.main.batches', deliver_policy: DeliverPolicy.All });
    const indexes: number[] = [];
    const messages = await consumer.consume();
    for await (const message of messages) {
      indexes.push(headerInt(message, HEADER_INDEX));
      if (message.info.pending === 0) break;
    }
    messages.stop();
    assert.deepEqual(indexes, Array.from({ length: last }, (_, i) => i + 1));

    // the follower saw the whole stream as it was written: the same board as the reopened writer
    assert.ok(await follower.replica.caughtUpTo(last), `the follower stopped at ${follower.replica.appliedIndex}: ${follower.replica.stale?.message ?? ''}`);
    assert.equal(follower.replica.engine.seq, writer.writer.engine.seq);
    const reference = await serveEngine(writer.writer.engine, clock, board, join(writer.dataDir, 'odds.db'));
    assertSameServed(reference, await serveEngine(follower.replica.engine, clock, board, join(follower.dataDir, 'odds.db')), 'follower');

    const result = await submitRandom();
    assert.equal(result.index, last + 1);
    assert.ok(await follower.replica.caughtUpTo(last + 1));
  });
});
