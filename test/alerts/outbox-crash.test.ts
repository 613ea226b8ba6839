// The outbox survives kill -9: the service (tsx service/main.ts, a child process on a
// temp DATA_DIR) takes status changes over its ingest listener while the webhook
// endpoint is down; once the admin API shows the events pending in the outbox, the
// process is SIGKILLed. The endpoint comes up, the service starts again on the same
// DATA_DIR (in this process: a second child start costs ~10 s on a loaded machine, and
// what is tested is what the killed process left on disk), and the endpoint receives
// every one of those events, in order, signed.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { NOW, startTestApp, testBoard, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';
import { startServiceChild, type ServiceChild } from '../../fixtures/harness/service-child.ts';
import { admin } from '../../fixtures/harness/adminClient.ts';
import { scheduledEvents } from './board-picks.ts';
import { downReceiver } from './receivers.ts';

const ENV = { ALERTS_TICK_MS: '20', ALERTS_RETRY_BASE_MS: '20', ALERTS_RETRY_MAX_MS: '100' };

test('events in the outbox survive a SIGKILL of the service and are delivered after the restart', async () => {
  const dir = tempDataDir('alerts-crash-');
  const engine = new OddsEngine(new ManualClock(NOW));
  loadBoard(engine, testBoard('small'));
  const events = scheduledEvents(engine, 5);
  const receiver = await downReceiver();
  let child: ServiceChild | null = null;
  let restarted: TestApp | null = null;
  try {
    child = await startServiceChild(dir, ENV);
    const token = readFileSync(join(dir, 'ingest-token'), 'utf8').trim();
    const created = await admin(child.ingestPort, token, 'POST', '/alerts/v1/subscriptions/create', { url: receiver.url, filters: [{ type: 'event_status' }] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data[0].id as string;
    receiver.secret = created.body.data[0].secret;
    for (const eventId of events) assert.equal((await postBatch(child.ingestPort, token, ndjson([{ op: 'status', eventId, status: 'in_progress' }]))).status, 200);
    const port = child.ingestPort;
    const pending = async () => (await admin(port, token, 'GET', `/alerts/v1/subscriptions/${id}`)).body.data[0].delivery.pending as number;
    assert.ok(await eventually(async () => (await pending()) === events.length, 10_000), 'all events pending in the outbox');
    assert.equal(await child.kill(), 'SIGKILL');
    child = null;

    await receiver.up();
    restarted = await startTestApp({ dataDir: dir, dbPath: join(dir, 'odds.db'), env: ENV });
    const ingestPort = restarted.app.durable!.listener.port;
    assert.ok(await eventually(() => receiver.firstSeen.length === events.length, 15_000), `received ${receiver.firstSeen.length} of ${events.length}`);
    assert.deepEqual(
      receiver.firstSeen.map((e) => [e.type, e.data.eventId, e.data.from, e.data.to]),
      events.map((eventId) => ['event.status_changed', eventId, 'scheduled', 'in_progress']),
    );
    assert.equal(receiver.badSignatures, 0);
    // the subscription came back with its secret and filters, and has nothing pending once delivered
    const view = async () => (await admin(ingestPort, token, 'GET', `/alerts/v1/subscriptions/${id}`)).body.data[0];
    assert.equal((await view()).secretHint, receiver.secret.slice(-4));
    assert.ok(await eventually(async () => (await view()).delivery.pending === 0, 5000), JSON.stringify(await view()));
  } finally {
    if (child !== null) await child.kill();
    await restarted?.close();
    await receiver.down();
    rmSync(dir, { recursive: true, force: true });
  }
});
