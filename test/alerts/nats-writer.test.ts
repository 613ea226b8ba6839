// Webhooks on a LOG=nats writer (a real nats-server): the admin API is on the writer's
// ingest port behind its token, the outbox in its DATA_DIR, and the changes it
// publishes and applies reach a real receiver as signed line moves, in order.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AlertEvent } from '../../alerts/alertEvent.ts';
import { openAlertsDatabase } from '../../alerts/alertsDatabase.ts';
import { ManualClock } from '../../engine/clock.ts';
import { admin } from '../../fixtures/harness/adminClient.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { startApp, type App } from '../../service/app.ts';
import { createLogger } from '../../service/logger.ts';
import { Operations } from '../../service/operations.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { tempDir } from '../replicas/replica-helpers.ts';
import { pricedRows, walkPrice } from './board-picks.ts';
import { Receiver } from './receivers.ts';

const TOKEN = 'nats-writer-webhooks';
const dir = tempDir('nats-webhooks-');
let nats: NatsTestServer;
let app: App | null = null;

before(async () => {
  nats = await startNatsServer();
  app = await startApp({
    clock: new ManualClock(NOW),
    board: testBoard(),
    dataDir: join(dir, 'data'),
    ingestPort: 0,
    host: '127.0.0.1',
    port: 0,
    env: { LOG: 'nats', ROLE: 'writer', NATS_URL: nats.url, REPLICA_ID: 'writer', INGEST_TOKEN: TOKEN, CHECKPOINT_INTERVAL_MS: '0', WAL_FSYNC: '0', SHUTDOWN_GRACE_MS: '0', ALERTS_TICK_MS: '20' },
    operations: new Operations(),
    logger: createLogger('error', { write: () => {} }),
    log: () => {},
  });
});
after(async () => {
  await app?.close().catch(() => {});
  await nats.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('a LOG=nats writer sends signed webhooks of the changes it publishes, in order, from its own outbox', { timeout: 60_000 }, async () => {
  const writer = app!;
  assert.ok(writer.alerts !== null, 'webhooks run on the writer');
  const ingestPort = writer.replicated!.listenerPort()!;
  const receiver = new Receiver();
  await receiver.up();
  try {
    assert.equal((await admin(ingestPort, 'wrong-token', 'GET', '/alerts/v1/subscriptions')).status, 401);
    const rows = pricedRows(writer.engine, 2);
    const created = await admin(ingestPort, TOKEN, 'POST', '/alerts/v1/subscriptions/create', { url: receiver.url, filters: [{ type: 'line_move', oddsIds: rows }] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    receiver.secret = created.body.data[0].secret;
    for (let k = 0; k < 8; k++) {
      const reply = await postBatch(ingestPort, TOKEN, ndjson(rows.map((id, i) => ({ op: 'price', id, priceAmerican: walkPrice(k + i * 5 + 1) }))));
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      await sleep(30);
    }
    const outbox = () => {
      const db = openAlertsDatabase(join(dir, 'data', 'alerts.db'));
      try {
        return (db.prepare('SELECT body FROM alert_events ORDER BY seq').all() as { body: string }[]).map((r) => (JSON.parse(r.body) as AlertEvent).id);
      } finally {
        db.close();
      }
    };
    assert.ok(await eventually(() => outbox().length >= 8 && receiver.firstSeen.length === outbox().length, 15_000), `received ${receiver.firstSeen.length} of ${outbox().length}`);
    assert.deepEqual(receiver.firstSeen.map((e) => e.id), outbox());
    assert.equal(receiver.badSignatures, 0);
    for (const id of rows) {
      const moves = receiver.firstSeen.filter((e) => e.data.oddsId === id);
      assert.equal(moves.at(-1)!.data.to.priceAmerican, writer.engine.rowObject(writer.engine.slotOf(id), 'all').priceAmerican, `${id}: its last move is its price now`);
    }
  } finally {
    await receiver.down();
  }
});
