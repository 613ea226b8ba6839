// A stream position outlives the process: the service as a child process (tsx
// service/main.ts) on a DATA_DIR, stopped with SIGTERM (a last checkpoint) and killed
// with SIGKILL (the board comes back from the log), and a writer and a replica over a
// real nats-server. A clk held by a client resumes on the restarted process, and on the
// other node of the same stream, with deltas only whose prev chain continues from it,
// and the client ends holding exactly what /odds serves.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startServiceChild, type ServiceChild } from '../../fixtures/harness/service-child.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { INGEST_TOKEN, ingestRandom, post, priceableIds, seededRandom, startNode, waitForSeq } from '../replicas/fleet-helpers.ts';
import { tempDir } from '../replicas/replica-helpers.ts';
import { StreamTestClient, byId, oddsRows, type Row } from './streamClient.ts';

const FILTER = { league: ['nba'] };

interface Held {
  rows: Map<string, Row>;
  clk: string;
}

async function imageOf(port: number): Promise<Held> {
  const client = await StreamTestClient.open(port);
  try {
    client.subscribe('s', { filter: FILTER });
    assert.ok(await eventually(() => client.state('s').images === 1, 20_000));
    return { rows: client.state('s').rows, clk: client.state('s').clk! };
  } finally {
    client.close();
  }
}

/**
 * Resumes `held` on the service at `port`; waits until its deltas reach the board's seq
 * `seq`. Returns the deltas' rows (ids in order) and the state the client ends with.
 */
async function resume(port: number, held: Held, seq: number): Promise<{ ids: string[]; client: StreamTestClient; held: Held }> {
  const client = await StreamTestClient.open(port);
  client.subscribe('s', { filter: FILTER, clk: held.clk });
  const state = client.state('s');
  state.rows = new Map(held.rows);
  state.clk = held.clk;
  // a delta that brings the client to the board's seq (its clk names it: <epoch>.<seq base36>....)
  await client.next((m) => m.op === 'delta' && parseInt(String(m.clk).split('.')[1], 36) === seq, 20_000);
  await client.sync();
  const ids = client.messages.filter((m) => m.op === 'delta').flatMap((m) => (m.rows as Row[]).map((row) => row.id));
  assert.equal(state.images, 0, `resumed with an image: ${JSON.stringify(client.messages.find((m) => m.op === 'status'))}`);
  assert.equal(state.resyncs, 0);
  assert.ok(!client.messages.some((m) => m.op === 'status'), 'no status message');
  assert.deepEqual(state.breaks, [], 'the prev chain continues from the clk held');
  assert.equal(client.messages.filter((m) => m.op === 'delta')[0]!.prev, held.clk, 'the first delta follows the clk held');
  return { ids, client, held: { rows: state.rows, clk: state.clk! } };
}

async function postChanges(ingestPort: number, changes: object[]): Promise<number> {
  const reply = await post(ingestPort, '/ingest/v1/batches', `${changes.map((c) => JSON.stringify(c)).join('\n')}\n`, { Authorization: `Bearer ${INGEST_TOKEN}` });
  assert.equal(reply.status, 200, reply.body);
  return (JSON.parse(reply.body) as { seq: number }).seq;
}

describe('stream resume across restarts of the service process', { timeout: 120_000 }, () => {
  const dir = tempDataDir('stream-restart-child-');
  let node: ServiceChild | null = null;
  after(async () => {
    await node?.kill().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it('a clk resumes after a SIGTERM and after a SIGKILL restart on the same DATA_DIR with deltas only', async () => {
    node = await startServiceChild(dir, { INGEST_TOKEN });
    let held = await imageOf(node.port);
    const ids = [...held.rows.keys()].filter((id) => held.rows.get(id)!.priceAmerican !== undefined && held.rows.get(id)!.priceAmerican !== null).slice(0, 6);
    assert.equal(ids.length, 6);

    // changes the client does not see, then a clean stop (a last checkpoint)
    await postChanges(node.ingestPort, [{ op: 'price', id: ids[0], priceAmerican: 321 }]);
    let seq = await postChanges(node.ingestPort, [{ op: 'remove', id: ids[1] }]);
    assert.equal(await node.stop(), 0);
    node = await startServiceChild(dir, { INGEST_TOKEN });
    assert.match(node.readyLine, /restored from/);
    assert.equal(node.seq, seq);
    let resumed = await resume(node.port, held, seq);
    assert.deepEqual(resumed.ids, [ids[0], ids[1]], 'exactly the changes after the clk, in change order');
    assert.deepEqual(byId(resumed.held.rows.values()), byId(await oddsRows(node.port, 'league=nba')));
    held = resumed.held;

    // a change the client sees live, then changes only in the log, then SIGKILL (no last checkpoint)
    const live = resumed.client;
    seq = await postChanges(node.ingestPort, [{ op: 'price', id: ids[2], priceAmerican: -155 }]);
    await live.next((m) => m.op === 'delta' && m.rows.some((row: Row) => row.id === ids[2]));
    await live.sync();
    held = { rows: live.state('s').rows, clk: live.state('s').clk! };
    live.close();
    await postChanges(node.ingestPort, [{ op: 'price', id: ids[3], priceAmerican: 404 }]);
    seq = await postChanges(node.ingestPort, [{ op: 'remove', id: ids[4] }, { op: 'price', id: ids[5], priceAmerican: 505 }]);
    assert.equal(await node.kill(), 'SIGKILL');
    node = await startServiceChild(dir, { INGEST_TOKEN });
    assert.equal(node.seq, seq, 'the log brought the board back to the last acknowledged seq');
    resumed = await resume(node.port, held, seq);
    assert.deepEqual(resumed.ids, [ids[3], ids[4], ids[5]]);
    assert.deepEqual(byId(resumed.held.rows.values()), byId(await oddsRows(node.port, 'league=nba')));
    resumed.client.close();
  });
});

describe('stream resume between a writer and a replica of one JetStream stream', { timeout: 150_000 }, () => {
  const random = seededRandom(2828);
  const dirs = { writer: tempDir('clk-writer-'), replica: tempDir('clk-replica-') };
  let nats: NatsTestServer;
  let writer: ServiceChild;
  let replica: ServiceChild;
  let ids: string[];

  before(async () => {
    nats = await startNatsServer();
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w');
    replica = await startNode(nats.url, dirs.replica, 'replica', 'r');
    ids = await priceableIds(writer.port);
  });
  after(async () => {
    for (const node of [writer, replica]) if (node !== undefined) await node.kill().catch(() => {});
    await nats?.dispose();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  });

  it("a writer's clk resumes on the replica, and the replica's on the writer, with deltas only", async () => {
    let run = await ingestRandom(writer.ingestPort, ids, random, 5);
    await waitForSeq([writer, replica], run.lastSeq);
    let held = await imageOf(writer.port);
    run = await ingestRandom(writer.ingestPort, ids, random, 10);
    await waitForSeq([writer, replica], run.lastSeq);
    let resumed = await resume(replica.port, held, run.lastSeq);
    assert.ok(resumed.ids.length > 0);
    assert.deepEqual(byId(resumed.held.rows.values()), byId(await oddsRows(replica.port, 'league=nba')));
    resumed.client.close();

    held = resumed.held;
    run = await ingestRandom(writer.ingestPort, ids, random, 10);
    await waitForSeq([writer, replica], run.lastSeq);
    resumed = await resume(writer.port, held, run.lastSeq);
    assert.ok(resumed.ids.length > 0);
    assert.deepEqual(byId(resumed.held.rows.values()), byId(await oddsRows(writer.port, 'league=nba')));
    resumed.client.close();
  });
});
