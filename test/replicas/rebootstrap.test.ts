// A running replica that falls behind the stream's retention re-bootstraps by itself:
// a writer and a replica as processes (service/main.ts, LOG=nats) on a stream that keeps
// only 64 KiB. The replica is frozen (SIGSTOP) while the writer ingests past what the
// stream retains and checkpoints to the object store; resumed (SIGCONT), it finds the
// records it needs gone, answers /readyz 503 "re-bootstrapping from the object store",
// restarts its board in process (same pid, same ports) from the newest object-store
// checkpoint plus the stream after it, and then answers every route identically to the
// writer at the same X-Board-Seq.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsCheckpointStore } from '../../persistence/nats/natsCheckpoints.ts';
import { CONSUME_OPTIONS, firstCommit, openBoardStream, type BoardStream } from '../../persistence/nats/natsStream.ts';
import type { ServiceChild } from '../../fixtures/harness/service-child.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { createServer as createNetServer } from 'node:net';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { httpRequest } from '../helpers/server.ts';
import { answers, assertSameAnswers, everyPath, ingestRandom, priceableIds, seededRandom, startNode, waitForSeq } from './fleet-helpers.ts';
import { tempDir } from './replica-helpers.ts';

/** What the stream keeps: a few dozen of the test's batches. */
const RETAINED_BYTES = String(64 * 1024);

describe('a running replica that fell behind the stream retention', { timeout: 180_000 }, () => {
  const random = seededRandom(1617);
  const dirs = { writer: tempDir('rebootstrap-writer-'), replica: tempDir('rebootstrap-replica-') };
  let nats: NatsTestServer;
  let nc: NatsConnection;
  let board: BoardStream;
  let checkpoints: NatsCheckpointStore;
  let writer: ServiceChild;
  let replica: ServiceChild;
  let ids: string[];

  before(async () => {
    nats = await startNatsServer();
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w', { NATS_MAX_BYTES: RETAINED_BYTES });
    // the shutdown grace keeps /readyz answering 503 for a while before the restart closes the ports
    // on given ports, as a deployment runs: uWebSockets.js then binds with SO_REUSEADDR and
    // the restart takes its ports again at once (after a start on port 0 it waits out TIME_WAIT)
    const [port, ingestPort] = [await freePort(), await freePort()];
    replica = await startNode(nats.url, dirs.replica, 'replica', 'r1', { SHUTDOWN_GRACE_MS: '3000', PORT: String(port), INGEST_PORT: String(ingestPort) });
    ids = await priceableIds(writer.port);
    nc = await connect({ servers: nats.url });
    board = await openBoardStream(nc, { manage: false });
    checkpoints = await NatsCheckpointStore.open(nc, {});
  });
  after(async () => {
    replica?.proc.kill('SIGCONT');
    for (const node of [writer, replica]) if (node !== undefined) await node.kill().catch(() => {});
    await nc?.close();
    await nats?.dispose();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Every node at `seq`, the snapshot without history too: it is rebuilt behind the
   * board when asked for, so a node that just started (the re-bootstrapped replica) holds
   * a newer one than a node nobody asked since.
   */
  async function waitForCurrent(nodes: ServiceChild[], seq: number): Promise<void> {
    await waitForSeq(nodes, seq);
    for (const node of nodes) {
      const current = await eventually(async () => Number((await httpRequest(node.port, '/api/v1/snapshot', { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } })).headers['x-board-seq']) === seq, 30_000, 20);
      assert.ok(current, `the snapshot of the node on port ${node.port} never reached seq ${seq}`);
    }
  }

  it('re-bootstraps from the object store in process and then answers like the writer', async () => {
    const first = await ingestRandom(writer.ingestPort, ids, random, 20);
    await waitForSeq([writer, replica], first.lastSeq);
    const applied = (JSON.parse((await httpRequest(replica.ingestPort, '/readyz')).body.toString()) as { replica: { applied: number } }).replica.applied;

    replica.proc.kill('SIGSTOP');
    // ingest until the stream no longer holds the record after the replica's, nor any the
    // server may have sent it for the pull request it had open (up to max_messages commits,
    // read from the socket once it resumes), and the object store has a checkpoint past the hole
    let lastSeq = first.lastSeq;
    let behind = false;
    for (let round = 0; round < 40 && !behind; round++) {
      lastSeq = (await ingestRandom(writer.ingestPort, ids, random, 40)).lastSeq;
      const oldest = await firstCommit(board);
      const stored = await eventually(async () => ((await checkpoints.newest())?.logIndex ?? 0) >= (oldest?.index ?? Infinity) - 1, 5000, 50);
      behind = oldest !== null && oldest.index > applied + CONSUME_OPTIONS.max_messages + 1 && stored;
    }
    assert.ok(behind, 'the stream never dropped the records after the replica');

    replica.proc.kill('SIGCONT');
    // it notices the hole, says so on /readyz, closes and starts again on the same ports
    let saw503 = '';
    const restarted = await eventually(
      async () => {
        const reply = await httpRequest(replica.ingestPort, '/readyz').catch(() => null);
        if (reply !== null && reply.status === 503 && /re-bootstrapping from the object store/.test(reply.body.toString())) saw503 = reply.body.toString();
        return replica.stdout().split('\n').filter((line) => line.includes(' ready in ')).length >= 2;
      },
      120_000,
      20,
    );
    assert.ok(restarted, `the replica never restarted its board:\n${replica.stdout().slice(-3000)}\n${replica.stderr().slice(-2000)}`);
    assert.match(saw503, /"code":"not_ready"/);
    assert.match(saw503, /replica: fell behind the stream's retention: re-bootstrapping from the object store/);
    assert.equal(replica.proc.exitCode, null, 'the same process, not a restart from outside');
    const logLines = replica.stdout().split('\n');
    assert.ok(logLines.some((line) => line.includes('"event":"rebootstrap"')), 'the re-bootstrap is logged');
    const readyAgain = logLines.filter((line) => line.includes(' ready in ')).at(-1)!;
    assert.match(readyAgain, /checkpoint \d+ \(object store\)/);
    assert.ok(readyAgain.includes(`:${replica.port}/api/v1`), 'the same public port');

    await waitForCurrent([writer, replica], lastSeq);
    const ready = await httpRequest(replica.ingestPort, '/readyz');
    assert.equal(ready.status, 200, ready.body.toString());
    const paths = await everyPath(writer.port);
    assertSameAnswers(await answers(writer.port, paths), await answers(replica.port, paths), 'the re-bootstrapped replica');

    // and it follows the stream again
    const more = await ingestRandom(writer.ingestPort, ids, random, 10);
    await waitForCurrent([writer, replica], more.lastSeq);
    assertSameAnswers(await answers(writer.port, paths), await answers(replica.port, paths), 'the re-bootstrapped replica, later');
  });
});

/** A port nothing listens on now (the kernel's pick for port 0, released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
