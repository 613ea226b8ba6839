// The running fleet: a real nats-server (JetStream in a temp dir), one writer and two
// replicas, each the service as a child process (`tsx service/main.ts` with LOG=nats,
// ROLE=writer|replica) on its own DATA_DIR. Random batches go to the writer's ingest
// port; then every GET route of the OpenAPI document answers with the same status,
// X-Board-Seq, ETag and bytes on all three (the snapshot's gzip bytes included). A
// replica killed with SIGKILL mid-stream restarts from its own checkpoint, catches up
// and agrees again; the writer killed mid-publish restarts from the stream and applies
// nothing twice (its board seq equals the replicas' on the same stream); a write to a
// replica's ingest port is 403 read_only; replicas started with other fixture settings
// than the writer's (BOARD, SEED) load the start board the writer recorded; a key's per-minute limit holds across the
// fleet, not per node; /account/usage on any node reports the key's monthly count across the fleet.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openPersistence } from '../../persistence/persistence.ts';
import type { ServiceChild } from '../../fixtures/harness/service-child.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { httpRequest } from '../helpers/server.ts';
import { answers, assertSameAnswers, boardSeq, everyPath, firstStreamEvent, ingestRandom, post, priceableIds, seededRandom, startNode, waitForSeq, INGEST_TOKEN } from './fleet-helpers.ts';
import { tempDir } from './replica-helpers.ts';

const REPLICA_SETTINGS = { BOARD: 'medium', SEED: '7' };

describe('a writer and two replicas as processes over JetStream', { timeout: 150_000 }, () => {
  const random = seededRandom(1616);
  const dirs = { writer: tempDir('fleet-writer-'), r1: tempDir('fleet-r1-'), r2: tempDir('fleet-r2-') };
  let nats: NatsTestServer;
  let writer: ServiceChild;
  let r1: ServiceChild;
  let r2: ServiceChild;
  let ids: string[];
  let paths: string[];
  let lastSeq = 0;

  before(async () => {
    nats = await startNatsServer();
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w');
    // other fixture settings than the writer's: a replica takes the start board the writer recorded
    [r1, r2] = await Promise.all([startNode(nats.url, dirs.r1, 'replica', 'r1', REPLICA_SETTINGS), startNode(nats.url, dirs.r2, 'replica', 'r2', REPLICA_SETTINGS)]);
    ids = await priceableIds(writer.port);
    paths = await everyPath(writer.port);
  });
  after(async () => {
    for (const node of [writer, r1, r2]) if (node !== undefined) await node.kill().catch(() => {});
    await nats?.dispose();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  });

  /** A new key of `plan`, written into every node's key table (the nodes share keys this way in a deployment too). */
  function sharedKey(plan: 'FREE' | 'PRO'): string {
    let key = '';
    let row: Record<string, unknown> = {};
    for (const [i, dir] of [dirs.writer, dirs.r1, dirs.r2].entries()) {
      const persistence = openPersistence({ path: join(dir, 'odds.db'), env: {} });
      try {
        if (i === 0) {
          const created = persistence.apiKeys.create({ plan, label: 'fleet test' });
          key = created.key;
          row = persistence.db.prepare('SELECT * FROM api_keys WHERE key_hash = ?').get(created.record.keyHash) as Record<string, unknown>;
        } else {
          const names = Object.keys(row).filter((name) => name !== 'id');
          persistence.db.prepare(`INSERT INTO api_keys (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...names.map((name) => row[name]));
        }
      } finally {
        persistence.close();
      }
    }
    return key;
  }

  async function assertFleetAgrees(seq: number): Promise<void> {
    await waitForSeq([writer, r1, r2], seq);
    const reference = await answers(writer.port, paths);
    assert.equal(reference.seq, seq);
    assertSameAnswers(reference, await answers(r1.port, paths), 'replica 1');
    assertSameAnswers(reference, await answers(r2.port, paths), 'replica 2');
  }

  it('replicas with empty disks bootstrap from the checkpoint in the object store', () => {
    assert.match(writer.readyLine, /fixture board loaded and checkpointed/);
    for (const node of [r1, r2]) assert.match(node.readyLine, /replica on nats:.*checkpoint \d+ \(object store\)/);
  });

  it('after random ingest every route answers identically on all three at the same X-Board-Seq', async () => {
    const run = await ingestRandom(writer.ingestPort, ids, random, 80);
    assert.equal(run.acked, 80);
    lastSeq = run.lastSeq;
    assert.ok(paths.length > 25, `only ${paths.length} paths`);
    await assertFleetAgrees(lastSeq);
    // the sharp books' random ticks made steam moves, so /steam above compared moves, not empty lists
    assert.ok(paths.includes('/api/v1/steam'));
    const steam = JSON.parse((await httpRequest(writer.port, '/api/v1/steam?limit=500')).body.toString()) as { data: unknown[] };
    assert.ok(steam.data.length > 0, 'no steam move on the writer');
    // the push stream starts with the same image and the same clk on every node
    const streamPath = '/api/v1/stream/sse?league=nba';
    const image = await firstStreamEvent(writer.port, streamPath);
    assert.match(image, /clk/);
    assert.equal(await firstStreamEvent(r1.port, streamPath), image, 'replica 1: stream image');
    assert.equal(await firstStreamEvent(r2.port, streamPath), image, 'replica 2: stream image');
    // the answer names the seq it reflects; a 304 does too
    const status = await httpRequest(r1.port, '/api/v1/status');
    const again = await httpRequest(r1.port, '/api/v1/status', { headers: { 'If-None-Match': String(status.headers.etag) } });
    assert.equal(again.status, 304);
    assert.equal(again.headers['x-board-seq'], String(lastSeq));
  });

  it('/readyz on a replica reports its lag behind the stream', async () => {
    const reply = await httpRequest(r1.port, '/readyz');
    assert.equal(reply.status, 200, reply.body.toString());
    const body = JSON.parse(reply.body.toString()) as { checks: Record<string, string>; replica: { lag: number; applied: number } };
    assert.equal(body.checks.replica, 'ok');
    assert.equal(body.replica.lag, 0);
    assert.ok(body.replica.applied >= 80);
  });

  it('a write to a replica is 403 read_only, on HTTP and on the WebSocket', async () => {
    const reply = await post(r1.ingestPort, '/ingest/v1/batches', `{"op":"price","id":"${ids[0]}","priceAmerican":-110}\n`, { Authorization: `Bearer ${INGEST_TOKEN}` });
    assert.equal(reply.status, 403);
    assert.equal((JSON.parse(reply.body) as { code: string }).code, 'read_only');
    const upgrade = await httpRequest(r2.ingestPort, '/ingest/v1/ws', { headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    assert.equal(upgrade.status, 403);
    assert.equal((JSON.parse(upgrade.body.toString()) as { code: string }).code, 'read_only');
    assert.equal(await boardSeq(r1.port), lastSeq, 'the refused write changed nothing');
  });

  it('a replica killed mid-stream restarts from its own checkpoint, catches up and agrees', async () => {
    let killed: Promise<number | string> | null = null;
    const run = await ingestRandom(writer.ingestPort, ids, random, 120, {
      onAck: (acked) => {
        if (acked === 40) killed = r1.kill();
      },
    });
    assert.equal(await killed, 'SIGKILL');
    lastSeq = run.lastSeq;
    r1 = await startNode(nats.url, dirs.r1, 'replica', 'r1', REPLICA_SETTINGS);
    assert.match(r1.readyLine, /checkpoint \d+ \(local\)/);
    await assertFleetAgrees(lastSeq);
  });

  it('the writer killed mid-publish restarts from the stream and applies nothing twice', async () => {
    let killed: Promise<number | string> | null = null;
    const run = await ingestRandom(writer.ingestPort, ids, random, 400, {
      tolerateFailure: true,
      onAck: (acked) => {
        if (acked === 30) killed = writer.kill();
      },
    });
    assert.equal(await killed, 'SIGKILL');
    assert.ok(run.failed > 0, 'some batches were cut off by the kill');
    writer = await startNode(nats.url, dirs.writer, 'writer', 'w');
    assert.match(writer.readyLine, /restored: checkpoint/);
    // every acknowledged batch is in the restored board: its seq is at least the last acknowledged
    assert.ok(writer.seq >= run.lastSeq, `restored at seq ${writer.seq}, below the acknowledged ${run.lastSeq}`);
    // the replicas applied each record of the stream once: the writer, restored from the
    // same stream, reaches the same seq and the same bytes only if it applied none twice
    await assertFleetAgrees(writer.seq);
    // and the log goes on after the restart
    const more = await ingestRandom(writer.ingestPort, ids, random, 20);
    assert.equal(more.acked, 20);
    await assertFleetAgrees(more.lastSeq);
    lastSeq = more.lastSeq;
  });

  it("a key's per-minute limit holds across the replicas, not per node", async () => {
    // the same FREE key (60 requests a minute) in every node's key table
    const key = sharedKey('FREE');
    const get = (node: ServiceChild) => httpRequest(node.port, '/api/v1/leagues', { headers: { 'X-Api-Key': key } });
    // 10 requests on the writer...
    for (let i = 0; i < 10; i++) assert.equal((await get(writer)).status, 200);
    // ...which each replica learns through the usage bucket: the remaining count it answers is
    // the fleet's (each poll counts too: polled every 500 ms while the counts flush each second, at most
    // 20 polls a node, so the sync alone cannot use up the minute)
    let ownR1 = 0;
    const synced = await eventually(async () => {
      const reply = await get(r1);
      ownR1++;
      return Number(reply.headers['x-ratelimit-remaining']) === 60 - 10 - ownR1;
    }, 10_000, 500);
    assert.ok(synced, 'replica 1 never counted the writer\'s requests');
    let ownR2 = 0;
    const syncedR2 = await eventually(async () => {
      const reply = await get(r2);
      ownR2++;
      return Number(reply.headers['x-ratelimit-remaining']) === 60 - 10 - ownR1 - ownR2;
    }, 10_000, 500);
    assert.ok(syncedR2, 'replica 2 never counted the others\' requests');
    // replica 2 then serves only what is left of the minute for the whole fleet
    let served = 0;
    let refused = 0;
    const enough = await eventually(async () => {
      const reply = await get(r2);
      if (reply.status === 200) served++;
      else {
        assert.equal(reply.status, 429);
        assert.equal((JSON.parse(reply.body.toString()) as { code: string }).code, 'rate_limited');
        refused++;
      }
      return refused >= 5;
    }, 20_000, 0);
    assert.ok(enough, `replica 2 never refused (served ${served})`);
    assert.ok(10 + ownR1 + ownR2 + served <= 60, `the fleet served ${10 + ownR1 + ownR2 + served} requests of a key limited to 60 a minute`);
    assert.ok(served >= 1, 'replica 2 served what was left');
  });

  it("/account/usage reports the key's monthly count across the fleet, on every node", async () => {
    const key = sharedKey('PRO');
    const get = (node: ServiceChild) => httpRequest(node.port, '/api/v1/leagues', { headers: { 'X-Api-Key': key } });
    const spread: [ServiceChild, number][] = [[writer, 7], [r1, 5], [r2, 3]];
    for (const [node, count] of spread) for (let i = 0; i < count; i++) assert.equal((await get(node)).status, 200);
    // each node answers the fleet's 15 (not its own 7, 5 or 3) once the counts are published
    for (const [node] of spread) {
      let seen: unknown = null;
      const fleetCount = await eventually(async () => {
        const reply = await httpRequest(node.port, '/api/v1/account/usage', { headers: { 'X-Api-Key': key } });
        assert.equal(reply.status, 200);
        seen = (JSON.parse(reply.body.toString()) as { data: { plan: string; monthlyUsed: number }[] }).data[0];
        return (seen as { monthlyUsed: number }).monthlyUsed === 15;
      }, 10_000, 100);
      assert.ok(fleetCount, `the node on port ${node.port} answered ${JSON.stringify(seen)}`);
      assert.equal((seen as { plan: string }).plan, 'PRO');
    }
  });
});
