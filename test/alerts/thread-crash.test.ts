// The webhook delivery thread dies mid-delivery (terminated from outside, as a crash or
// an out-of-memory kill of the thread would end it, with requests in flight and progress
// not yet written): the admin API answers 503 not_ready while it is down and 200 again
// once it is back, /metrics counts the restart, and the endpoint still gets every event
// of the outbox, those made while the thread was down included, first received in
// outbox order, signed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AlertEvent } from '../../alerts/alertEvent.ts';
import { openAlertsDatabase } from '../../alerts/alertsDatabase.ts';
import { anyMatches, parseFilters } from '../../alerts/filters.ts';
import { admin } from '../../fixtures/harness/adminClient.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { pricedRows, walkPrice } from './board-picks.ts';
import { Receiver } from './receivers.ts';

const ENV = { ALERTS_TICK_MS: '20', ALERTS_RETRY_BASE_MS: '20', ALERTS_RETRY_MAX_MS: '150', ALERTS_TIMEOUT_MS: '2000' };

let t: TestApp;
before(async () => {
  t = await startTestApp({ dataDir: true, env: ENV });
});
after(() => t.close());

test('a delivery thread that dies mid-delivery is restarted: 503 only while down, the restart counted, every event delivered in order', async () => {
  const token = t.app.durable!.token.token;
  const ingestPort = t.app.durable!.listener.port;
  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => admin(ingestPort, token, method, path, body);
  const receiver = new Receiver({ delayMs: [20, 80] });
  await receiver.up();
  try {
    const rows = pricedRows(t.app.engine, 3);
    const created = await call('POST', '/alerts/v1/subscriptions/create', { url: receiver.url, maxBatchEvents: 4, filters: [{ type: 'line_move', oddsIds: rows }] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data[0].id as string;
    receiver.secret = created.body.data[0].secret;
    let k = 0;
    const submitSome = async (batches: number) => {
      for (let b = 0; b < batches; b++, k++) {
        const reply = await postBatch(ingestPort, token, ndjson(rows.map((row, i) => ({ op: 'price', id: row, priceAmerican: walkPrice(k + i * 7 + 1) }))));
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        await sleep(25);
      }
    };

    await submitSome(12);
    // mid-delivery: some received, more pending (batches of 4 to a receiver taking 20-80 ms each)
    assert.ok(await eventually(() => receiver.firstSeen.length >= 4, 10_000), `received ${receiver.firstSeen.length}`);
    assert.equal((await call('GET', `/alerts/v1/subscriptions/${id}`)).status, 200);
    const thread = t.app.alerts!.deliveryThread!;
    const exited = once(thread, 'exit');
    await thread.terminate();
    await exited;

    // down: the admin API says so, events keep being made (held for the thread)
    const down = await call('GET', '/alerts/v1/subscriptions');
    assert.equal(down.status, 503, JSON.stringify(down.body));
    assert.equal(down.body.code, 'not_ready');
    await submitSome(6);
    // back within the restart delay (1 s): every answer until then 503, every one after 200
    const statuses: number[] = [];
    assert.ok(
      await eventually(async () => {
        statuses.push((await call('GET', `/alerts/v1/subscriptions/${id}`)).status);
        return statuses.at(-1) === 200;
      }, 15_000, 50),
      `admin answers while down: ${statuses.join(' ')}`,
    );
    for (let i = 0; i < 5; i++) statuses.push((await call('GET', `/alerts/v1/subscriptions/${id}`)).status);
    const firstOk = statuses.indexOf(200);
    assert.ok(statuses.slice(0, firstOk).every((s) => s === 503) && statuses.slice(firstOk).every((s) => s === 200), statuses.join(' '));
    assert.notEqual(t.app.alerts!.deliveryThread, thread, 'a new thread');
    assert.equal(t.app.alerts!.restarts, 1);
    await submitSome(6);

    // every event of the outbox the subscription takes, first received in outbox order, signed
    const filters = parseFilters([{ type: 'line_move', oddsIds: rows }]);
    const outbox = () => {
      const db = openAlertsDatabase(t.app.alerts!.config.dbPath);
      try {
        return (db.prepare('SELECT body FROM alert_events ORDER BY seq').all() as { body: string }[]).map((r) => JSON.parse(r.body) as AlertEvent).filter((e) => anyMatches(filters, e)).map((e) => e.id);
      } finally {
        db.close();
      }
    };
    assert.ok(await eventually(() => receiver.firstSeen.length === outbox().length, 15_000), `received ${receiver.firstSeen.length} of ${outbox().length}`);
    assert.deepEqual(receiver.firstSeen.map((e) => e.id), outbox(), 'first receipts in outbox order');
    assert.equal(receiver.badSignatures, 0);
    // nothing lost while the thread was down: each row's last event is its price now
    for (const row of rows) {
      const moves = receiver.firstSeen.filter((e) => e.data.oddsId === row);
      for (let i = 1; i < moves.length; i++) assert.deepEqual(moves[i]!.data.from, moves[i - 1]!.data.to, `${row}: moves chain`);
      assert.equal(moves.at(-1)!.data.to.priceAmerican, t.app.engine.rowObject(t.app.engine.slotOf(row), 'all').priceAmerican);
    }
    const metrics = await (await fetch(`http://127.0.0.1:${ingestPort}/metrics`)).text();
    assert.match(metrics, /^odds_alerts_thread_restarts_total 1$/m);
  } finally {
    await receiver.down();
  }
});
