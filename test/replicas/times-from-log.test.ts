// Every time in a body comes from the log (the writer's clock), never from a node's own
// clock: a writer and a replica as processes over a real nats-server, both on the system
// clock (NOW unset: their clocks differ by whatever separates their reads), answer every
// GET route with the same bytes at the same X-Board-Seq, empty /edges and /arbitrage
// pages included (their meta.updated is the board's time when the result was first
// seen, not the node's clock at that moment).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { ServiceChild } from '../../fixtures/harness/service-child.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { answers, assertSameAnswers, everyPath, ingestRandom, priceableIds, seededRandom, startNode, waitForSeq } from './fleet-helpers.ts';
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
