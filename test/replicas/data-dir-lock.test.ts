// One process per DATA_DIR with LOG=nats too, over a real nats-server: a second writer
// on the writer's DATA_DIR (its SQLite cold data and keys, its checkpoints) refuses to
// start and names the pid holding it, and so does a replica pointed at it; the first
// writer goes on taking batches; a kill -9 gives the lock back with the process, and the
// next writer on that DATA_DIR starts and restores what was acknowledged.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { httpRequest } from '../helpers/server.ts';
import type { ServiceChild } from '../../fixtures/harness/service-child.ts';
import { post, startNode, INGEST_TOKEN } from './fleet-helpers.ts';
import { tempDir } from './replica-helpers.ts';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('the DATA_DIR lock with LOG=nats', { timeout: 120_000 }, () => {
  const dir = tempDir('nats-lock-');
  let nats: NatsTestServer;
  const children: ServiceChild[] = [];
  before(async () => {
    nats = await startNatsServer();
  });
  after(async () => {
    for (const child of children) await child.kill().catch(() => {});
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second writer or a replica on a writer\'s DATA_DIR is refused naming its pid; after a kill -9 the next writer starts', async () => {
    const first = await startNode(nats.url, dir, 'writer', 'w1');
    children.push(first);
    const inUse = new RegExp(`DATA_DIR ${escape(dir)} is in use by process ${first.proc.pid}`);
    for (const role of ['writer', 'replica'] as const) {
      await assert.rejects(startNode(nats.url, dir, role, `second-${role}`), (error: Error) => {
        assert.match(error.message, inUse, role);
        return true;
      });
    }

    // the first writer is untouched by the refused starts
    const page = JSON.parse((await httpRequest(first.port, '/api/v1/odds?limit=1')).body.toString()) as { data: { id: string }[] };
    const id = page.data[0]!.id;
    const batch = await post(first.ingestPort, '/ingest/v1/batches', `${JSON.stringify({ op: 'price', id, priceAmerican: 432 })}\n`, { Authorization: `Bearer ${INGEST_TOKEN}` });
    assert.equal(batch.status, 200, batch.body);

    // the kernel gives the lock back with the process
    await first.kill();
    const next = await startNode(nats.url, dir, 'writer', 'w2');
    children.push(next);
    const row = JSON.parse((await httpRequest(next.port, '/api/v1/odds?limit=1')).body.toString()) as { data: { id: string; priceAmerican: number }[] };
    assert.equal(row.data[0]!.id, id);
    assert.equal(row.data[0]!.priceAmerican, 432, 'the acknowledged batch, restored from the stream');
    assert.equal(await next.stop(), 0);
  });
});
