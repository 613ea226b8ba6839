// Every time in a body comes from the log (the writer's clock), never from a node's own
// clock: a writer and a replica as processes over a real nats-server, both on the system
// clock (NOW unset: their clocks differ by whatever separates their reads), answer every
// GET route with the same bytes at the same X-Board-Seq, empty /edges and /arbitrage
// pages included (their meta.updated is the board's time when the result was first
// seen, not the node's clock at that moment). And /edges ages sharp quotes on the board's
// time: a writer and a replica on frozen clocks minutes apart answer the same bytes
// before and after the writer's clock jumps past the 10-minute staleness window.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { ServiceChild } from '../../fixtures/harness/service-child.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { answers, assertSameAnswers, everyPath, INGEST_TOKEN, ingestRandom, post, priceableIds, seededRandom, startNode, waitForSeq } from './fleet-helpers.ts';
import { gunzipSync } from 'node:zlib';
import { httpRequest, type HttpReply } from '../helpers/server.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { tempDir } from './replica-helpers.ts';

/** Pages that are empty on the small board (no result passes the filter): their meta.updated is not a row's. */
const EMPTY_PAGES = ['/api/v1/edges?min_edge=1', '/api/v1/edges?league=epl&min_edge=0.99', '/api/v1/arbitrage?min_profit=1000', '/api/v1/arbitrage?type=three_way&min_profit=500'];

describe('times from the log: a writer and a replica on their own clocks', { timeout: 120_000 }, () => {
  const random = seededRandom(505);
  const dirs = { writer: tempDir('times-writer-'), replica: tempDir('times-replica-') };
  let nats: NatsTestServer;
  let writer: ServiceChild;
  let replica: ServiceChild;

  before(async () => {
    nats = await startNatsServer();
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w', { NOW: '' });
    replica = await startNode(nats.url, dirs.replica, 'replica', 'r', { NOW: '' });
  });
  after(async () => {
    for (const node of [writer, replica]) if (node !== undefined) await node.kill().catch(() => {});
    await nats?.dispose();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  });

  it('every route answers the same bytes on both at the same X-Board-Seq', async () => {
    const ids = await priceableIds(writer.port);
    const paths = [...(await everyPath(writer.port)), ...EMPTY_PAGES];
    for (let round = 0; round < 3; round++) {
      const run = await ingestRandom(writer.ingestPort, ids, random, 10);
      await waitForSeq([writer, replica], run.lastSeq);
      // the replica is asked first in odd rounds: whichever node sees a version first, the times agree
      const [first, second] = round % 2 === 0 ? [writer, replica] : [replica, writer];
      const a = await answers(first.port, paths);
      await new Promise((resolve) => setTimeout(resolve, 15)); // the nodes' clocks have moved on
      const b = await answers(second.port, paths);
      assertSameAnswers(a, b, `round ${round}`);
    }
    for (const path of EMPTY_PAGES) {
      const body = JSON.parse((await answers(replica.port, [path])).replies.get(path)!.body.toString()) as { data: unknown[]; meta: { updated: string } };
      assert.deepEqual(body.data, [], `${path} is empty`);
    }
  });
});

/** Every /edges page the staleness rule shapes: each devig method's kept or computed book. */
const EDGE_PATHS = ['/api/v1/edges', '/api/v1/edges?min_edge=0&limit=1000', '/api/v1/edges?min_edge=0&devig=power&limit=1000', '/api/v1/edges?min_edge=0&devig=shin&limit=1000'];
const SHARP_BOOKS = ['pinnacle', 'circa', 'bookmaker'];
const MINUTE = 60_000;

function edgesOf(reply: HttpReply): unknown[] {
  const body = reply.headers['content-encoding'] === 'gzip' ? gunzipSync(reply.body) : reply.body;
  return (JSON.parse(body.toString()) as { data: unknown[] }).data;
}

describe('times from the log: sharp quotes age out on the board\'s time', { timeout: 120_000 }, () => {
  const dirs = { writer: tempDir('edges-time-writer-'), replica: tempDir('edges-time-replica-') };
  let nats: NatsTestServer;
  let writer: ServiceChild;
  let replica: ServiceChild;

  before(async () => {
    nats = await startNatsServer();
    // frozen clocks 5 minutes apart: a node's own clock must not decide which quote is stale
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w', { NOW: new Date(NOW).toISOString() });
    replica = await startNode(nats.url, dirs.replica, 'replica', 'r', { NOW: new Date(NOW + 5 * MINUTE).toISOString() });
  });
  after(async () => {
    for (const node of [writer, replica]) if (node !== undefined) await node.kill().catch(() => {});
    await nats?.dispose();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  });

  it('the writer and a replica answer /edges alike while quotes are fresh and once they aged out', async () => {
    const odds = JSON.parse((await httpRequest(writer.port, '/api/v1/odds?limit=1000')).body.toString()) as { data: { id: string; sportsbook: string; priceAmerican: number | null; dfsMultiplier?: number }[] };
    // a row no edge reads (neither a sharp book nor a DFS source): ticking it only moves the board's time
    const clockRow = odds.data.find((r) => !SHARP_BOOKS.includes(r.sportsbook) && r.dfsMultiplier === undefined && r.priceAmerican !== null)!;
    const tick = async (node: ServiceChild, price: number) => {
      const reply = await post(node.ingestPort, '/ingest/v1/batches', `${JSON.stringify({ op: 'price', id: clockRow.id, priceAmerican: price })}\n`, { Authorization: `Bearer ${INGEST_TOKEN}` });
      assert.equal(reply.status, 200, reply.body);
      return (JSON.parse(reply.body) as { seq: number }).seq;
    };

    let seq = await tick(writer, clockRow.priceAmerican! === 150 ? 151 : 150);
    await waitForSeq([writer, replica], seq);
    const fresh = await answers(replica.port, EDGE_PATHS);
    assertSameAnswers(await answers(writer.port, EDGE_PATHS), fresh, 'fresh quotes');
    assert.ok(edgesOf(fresh.replies.get(EDGE_PATHS[1]!)!).length > 0, 'the board has edges while its sharp quotes are fresh');

    // the writer restarts on a clock 11 minutes on: its next batch moves the board's time past every sharp quote's 10 minutes
    await writer.stop();
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w', { NOW: new Date(NOW + 11 * MINUTE).toISOString() });
    seq = await tick(writer, 152);
    await waitForSeq([writer, replica], seq);
    // the replica (whose own clock says only 5 minutes passed) is asked first, then the writer
    const aged = await answers(replica.port, EDGE_PATHS);
    assertSameAnswers(aged, await answers(writer.port, EDGE_PATHS), 'aged quotes');
    for (const path of EDGE_PATHS) assert.deepEqual(edgesOf(aged.replies.get(path)!), [], `${path}: no sharp quote is within 10 minutes of the board's time`);
  });
});
