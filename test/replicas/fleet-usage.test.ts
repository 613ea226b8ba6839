// Usage counts summed across replicas through JetStream key-value buckets on a real
// nats-server: each replica sees the others' counts once they published them, a
// per-minute limit checked against the fleet count holds across two replicas, the
// minute and month periods are counted apart, and a restarted replica continues from
// its own published monthly count.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FleetUsage } from '../../persistence/nats/fleetUsage.ts';
import { NOW } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';

describe('usage counts across replicas (JetStream KV)', () => {
  let nats: NatsTestServer;
  let nc: NatsConnection;
  let a: FleetUsage;
  let b: FleetUsage;

  before(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    a = await FleetUsage.open(nc, { replicaId: 'replica-a', flushIntervalMs: 0 });
    b = await FleetUsage.open(nc, { replicaId: 'replica-b', flushIntervalMs: 0 });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await nc?.close();
    await nats?.dispose();
  });

  it("each replica sees the sum of every replica's counts once published", async () => {
    for (let i = 0; i < 30; i++) a.count('key1', NOW);
    for (let i = 0; i < 20; i++) b.count('key1', NOW);
    assert.deepEqual(a.peek('key1', NOW), { minute: 30, month: 30 }, 'nothing published yet');
    await a.flush();
    await b.flush();
    // the minute and month counts travel in two buckets: wait for both on both replicas
    const both = (u: FleetUsage) => u.peek('key1', NOW).minute === 50 && u.peek('key1', NOW).month === 50;
    assert.ok(await eventually(() => both(a) && both(b)), JSON.stringify([a.peek('key1', NOW), b.peek('key1', NOW)]));
    assert.deepEqual(b.peek('key1', NOW), { minute: 50, month: 50 });
    // the next minute starts from zero; the month goes on
    assert.deepEqual(a.peek('key1', NOW + 60_000), { minute: 0, month: 50 });
    assert.deepEqual(a.peek('other', NOW), { minute: 0, month: 0 });
  });

  it('a per-minute limit checked against the fleet count holds across two replicas', async () => {
    const limit = 60;
    const at = NOW + 5 * 60_000;
    let served = 0;
    // replica a serves 40 requests and publishes; then replica b serves until the fleet limit
    for (let i = 0; i < 40; i++) if (a.count('key2', at).minute <= limit) served++;
    await a.flush();
    assert.ok(await eventually(() => b.peek('key2', at).minute === 40));
    let servedByB = 0;
    for (let i = 0; i < 50; i++) {
      if (b.count('key2', at).minute <= limit) {
        served++;
        servedByB++;
      }
    }
    assert.equal(servedByB, 20);
    assert.equal(served, limit);
  });

  it('a restarted replica continues from its own published monthly count', async () => {
    await a.close();
    a = await FleetUsage.open(nc, { replicaId: 'replica-a', flushIntervalMs: 0 });
    // key1: a had 30 and b 20 this month; a's restart forgets nothing
    assert.equal(a.peek('key1', NOW).month, 50);
    assert.equal(a.count('key1', NOW).month, 51);
    await a.flush();
    assert.ok(await eventually(() => b.peek('key1', NOW).month === 51));
  });
});
