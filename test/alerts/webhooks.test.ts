// Webhook delivery against real local receivers, through the real write path: the app
// runs durable (a temp DATA_DIR: alerts.db beside the log), changes come in as batches
// on the ingest listener, subscriptions are made through the admin API there. Four
// receivers take the same subscription: one healthy, one failing 40% of requests, one
// slow (some answers past the sender's 300 ms timeout), one down until the healthy one
// has everything and then up on the same port. Each must end up with every event the
// outbox holds, first received in the outbox's order, every request signed right.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AlertEvent } from '../../alerts/alertEvent.ts';
import { openAlertsDatabase } from '../../alerts/alertsDatabase.ts';
import { anyMatches, parseFilters } from '../../alerts/filters.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { admin } from '../../fixtures/harness/adminClient.ts';
import { pricedRows, scheduledEvents, walkPrice } from './board-picks.ts';
import { downReceiver, Receiver } from './receivers.ts';

const ENV = { ALERTS_TICK_MS: '20', ALERTS_RETRY_BASE_MS: '20', ALERTS_RETRY_MAX_MS: '150', ALERTS_TIMEOUT_MS: '300' };

describe('webhook alerts', () => {
  let t: TestApp;
  let token: string;
  let ingestPort: number;
  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => admin(ingestPort, token, method, path, body);

  before(async () => {
    t = await startTestApp({ dataDir: true, env: ENV });
    token = t.app.durable!.token.token;
    ingestPort = t.app.durable!.listener.port;
  });
  after(() => t.close());

  /** The outbox's events a subscription's filters take, in outbox order (what its receiver must get). */
  async function outboxIds(subscriptionId: string): Promise<string[]> {
    const filters = parseFilters((await t.app.alerts!.get(subscriptionId))!.filters);
    const db = openAlertsDatabase(t.app.alerts!.config.dbPath);
    try {
      const rows = db.prepare('SELECT body FROM alert_events ORDER BY seq').all() as { body: string }[];
      return rows.map((r) => JSON.parse(r.body) as AlertEvent).filter((e) => anyMatches(filters, e)).map((e) => e.id);
    } finally {
      db.close();
    }
  }

  async function submit(changes: unknown[]): Promise<void> {
    const reply = await postBatch(ingestPort, token, ndjson(changes));
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  }

  it('refuses requests without the token and bad subscriptions, naming the field', async () => {
    const anonymous = await admin(ingestPort, 'wrong-token', 'GET', '/alerts/v1/subscriptions');
    assert.equal(anonymous.status, 401);
    const cases: [unknown, string][] = [
      [{ filters: [{ type: 'event_status' }] }, 'url'],
      [{ url: 'ftp://x', filters: [{ type: 'event_status' }] }, 'url'],
      [{ url: 'http://127.0.0.1:1/x' }, 'filters'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'steam' }] }, 'filters[0].type'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'arbitrage', minProfit: -1 }] }, 'filters[0].minProfit'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'line_move' }] }, 'filters[0].oddsIds'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'event_status', statuses: ['over'] }] }, 'filters[0].statuses'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'event_status' }], batchWindowMs: 1e9 }, 'batchWindowMs'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'event_status' }], secret: 'short' }, 'secret'],
      [{ url: 'http://127.0.0.1:1/x', filters: [{ type: 'event_status' }], colour: 'red' }, 'colour'],
    ];
    for (const [body, param] of cases) {
      const reply = await call('POST', '/alerts/v1/subscriptions/create', body);
      assert.equal(reply.status, 400, JSON.stringify(body));
      assert.equal(reply.body.code, 'invalid_parameter');
      assert.equal(reply.body.param, param, JSON.stringify(reply.body));
    }
    const notJson = await admin(ingestPort, token, 'POST', '/alerts/v1/subscriptions/create', 'not json');
    assert.equal(notJson.status, 400);
    assert.equal((await call('GET', '/alerts/v1/subscriptions/sub_nope')).status, 404);
    assert.equal((await call('POST', '/alerts/v1/subscriptions/sub_nope/replay', { from: 0, to: 1 })).status, 404);
  });

  it('delivers every event at least once, in order, signed, to a healthy, a failing, a slow and a down-then-up endpoint', async () => {
    const healthy = new Receiver();
    const failing = new Receiver({ failShare: 0.4 });
    const slow = new Receiver({ delayMs: [50, 400] });
    const downUp = await downReceiver();
    await Promise.all([healthy.up(), failing.up(), slow.up()]);
    const receivers = { healthy, failing, slow, downUp };
    const events = scheduledEvents(t.app.engine, 6);
    const rows = pricedRows(t.app.engine, 3);
    const ids: Record<string, string> = {};
    for (const [name, r] of Object.entries(receivers)) {
      const reply = await call('POST', '/alerts/v1/subscriptions/create', {
        url: r.url,
        description: name,
        maxBatchEvents: 5,
        filters: [{ type: 'event_status', eventIds: events }, { type: 'line_move', oddsIds: rows }],
      });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      const created = reply.body.data[0];
      assert.match(created.secret, /^whsec_/);
      r.secret = created.secret;
      ids[name] = created.id;
      // the secret is shown once
      const again = await call('GET', `/alerts/v1/subscriptions/${created.id}`);
      assert.equal(again.body.data[0].secret, undefined);
      assert.equal(again.body.data[0].secretHint, created.secret.slice(-4));
    }

    // 30 batches of line moves, with status changes among them, each batch its own tick or more
    for (let k = 0; k < 30; k++) {
      const changes: unknown[] = rows.map((id, i) => ({ op: 'price', id, priceAmerican: walkPrice(k + i * 7 + 1) }));
      if (k % 5 === 0) changes.push({ op: 'status', eventId: events[k / 5]!, status: 'in_progress' });
      if (k === 29) changes.push({ op: 'status', eventId: events[0]!, status: 'final' });
      await submit(changes);
      await sleep(25);
    }

    // the healthy endpoint gets everything while the other is still down: one endpoint's outage holds up no one else
    const healthyIds = () => outboxIds(ids.healthy!);
    const healthyDone = async () => {
      const n = (await healthyIds()).length;
      return n > 0 && healthy.firstSeen.length === n;
    };
    assert.ok(await eventually(healthyDone, 10_000), `healthy has ${healthy.firstSeen.length} of ${(await healthyIds()).length}`);
    assert.equal(downUp.requests, 0);
    const waiting = await call('GET', `/alerts/v1/subscriptions/${ids.downUp}`);
    assert.ok(waiting.body.data[0].delivery.pending > 0);
    assert.ok(waiting.body.data[0].delivery.attempts > 0);
    assert.match(waiting.body.data[0].delivery.lastError, /ECONNREFUSED/);
    await downUp.up();

    for (const [name, r] of Object.entries(receivers)) {
      const expected = await outboxIds(ids[name]!);
      assert.ok(expected.length >= 30, `${name}: ${expected.length} events in the outbox`);
      assert.ok(await eventually(() => r.firstSeen.length === expected.length, 15_000), `${name} received ${r.firstSeen.length} of ${expected.length}`);
      assert.deepEqual(r.firstSeen.map((e) => e.id), expected, `${name}: first receipts in outbox order`);
      assert.equal(r.badSignatures, 0, name);
    }
    // the failing and slow endpoints were retried (and the slow one saw redeliveries after its timeouts)
    assert.ok(failing.requests > failing.answeredOk);
    assert.ok(slow.abandoned > 0, 'the sender timed out on the slow endpoint at least once');

    // every endpoint got the same events: the status moves in order per event
    const statusMoves = healthy.firstSeen.filter((e) => e.type === 'event.status_changed').map((e) => `${e.data.eventId}:${e.data.from}->${e.data.to}`);
    assert.deepEqual(statusMoves, [...events.map((id) => `${id}:scheduled->in_progress`), `${events[0]}:in_progress->final`]);
    // a watched row's moves chain: each event's `from` is the previous one's `to`
    for (const id of rows) {
      const moves = healthy.firstSeen.filter((e) => e.type === 'line.moved' && e.data.oddsId === id);
      assert.ok(moves.length > 0);
      for (let i = 1; i < moves.length; i++) assert.deepEqual(moves[i]!.data.from, moves[i - 1]!.data.to);
      assert.equal(moves.at(-1)!.data.to.priceAmerican, t.app.engine.rowObject(t.app.engine.slotOf(id), 'all').priceAmerican);
    }

    // /metrics (ingest port) shows the delivery thread's counts: what the receivers saw, failures, and once the
    // last acknowledgements are in (the slow endpoint's redeliveries), nothing waiting
    let metrics = '';
    const metric = (line: string) => Number(metrics.split('\n').find((l) => l.startsWith(`${line} `))?.slice(line.length + 1) ?? NaN);
    const scrape = async () => (metrics = await (await fetch(`http://127.0.0.1:${ingestPort}/metrics`)).text());
    assert.ok(await eventually(async () => (await scrape(), metric('odds_alerts_pending_events') === 0), 15_000, 100), metrics);
    const firstSeen = Object.values(receivers).reduce((sum, r) => sum + r.firstSeen.length, 0);
    assert.ok(metric('odds_alerts_delivered_events_total') >= firstSeen, metrics);
    assert.ok(metric('odds_alerts_requests_total{outcome="failed"}') >= failing.requests - failing.answeredOk, metrics);
    assert.ok(metric('odds_alerts_events_written_total') >= (await outboxIds(ids.healthy!)).length, metrics);
    assert.equal(metric('odds_alerts_pending_events'), 0, metrics);
    assert.equal(metric('odds_alerts_oldest_pending_seconds'), 0, metrics);
    assert.equal(metric('odds_alerts_thread_restarts_total'), 0, metrics);
    for (const r of Object.values(receivers)) await r.down();
  });

  it('deletes a subscription, pending events and all', async () => {
    const receiver = await downReceiver();
    const events = scheduledEvents(t.app.engine, 8).slice(6);
    const created = await call('POST', '/alerts/v1/subscriptions/create', { url: receiver.url, filters: [{ type: 'event_status', eventIds: events }] });
    const id = created.body.data[0].id as string;
    await submit([{ op: 'status', eventId: events[0]!, status: 'postponed' }]);
    assert.ok(await eventually(async () => (await call('GET', `/alerts/v1/subscriptions/${id}`)).body.data[0].delivery.attempts >= 2, 5000));
    const deleted = await call('POST', `/alerts/v1/subscriptions/${id}/delete`);
    assert.equal(deleted.status, 200);
    assert.equal((await call('GET', `/alerts/v1/subscriptions/${id}`)).status, 404);
    assert.equal((await call('GET', `/alerts/v1/subscriptions/${id}/dead-letters`)).status, 404);
  });
});

describe('webhook alerts: dead letters and replay', () => {
  it('dead-letters a batch still failing after the retry period, lists it, and a replay of its time range delivers it again with the same id', async () => {
    const t = await startTestApp({ dataDir: true, env: { ...ENV, ALERTS_RETRY_FOR_MS: '250' } });
    // closed in finally: a failed assertion must not leave its port open (the file then never ends)
    const receiver = await downReceiver();
    try {
      const token = t.app.durable!.token.token;
      const port = t.app.durable!.listener.port;
      const events = scheduledEvents(t.app.engine, 2);
      const created = await admin(port, token, 'POST', '/alerts/v1/subscriptions/create', { url: receiver.url, filters: [{ type: 'event_status' }] });
      const id = created.body.data[0].id as string;
      receiver.secret = created.body.data[0].secret;
      assert.equal((await postBatch(port, token, ndjson([{ op: 'status', eventId: events[0], status: 'in_progress' }]))).status, 200);
      const letters = async () => (await admin(port, token, 'GET', `/alerts/v1/subscriptions/${id}/dead-letters`)).body.data as any[];
      assert.ok(await eventually(async () => (await letters()).length === 1, 5000), 'dead-lettered');
      const [letter] = await letters();
      assert.equal(letter.type, 'event.status_changed');
      assert.equal(letter.event.data.eventId, events[0]);
      assert.ok(letter.attempts >= 2);
      assert.match(letter.lastError, /ECONNREFUSED/);
      const view = (await admin(port, token, 'GET', `/alerts/v1/subscriptions/${id}`)).body.data[0];
      assert.equal(view.delivery.pending, 0);
      assert.equal(view.delivery.deadLetters, 1);

      // the next event goes out once the endpoint is back; the dead letter does not come back by itself
      await receiver.up();
      assert.equal((await postBatch(port, token, ndjson([{ op: 'status', eventId: events[1], status: 'in_progress' }]))).status, 200);
      assert.ok(await eventually(() => receiver.firstSeen.length === 1, 5000));
      assert.equal(receiver.firstSeen[0]!.data.eventId, events[1]);
      // a replay queues the range's events up to the subscription's cursor (later ones are
      // still pending and go out anyway): wait until the delivery is recorded
      assert.ok(await eventually(async () => (await admin(port, token, 'GET', `/alerts/v1/subscriptions/${id}`)).body.data[0].delivery.pending === 0, 5000), 'the delivery is recorded');

      const bad = await admin(port, token, 'POST', `/alerts/v1/subscriptions/${id}/replay`, { from: 'yesterday', to: 0 });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.param, 'from');
      const now = t.clock.now();
      const replay = await admin(port, token, 'POST', `/alerts/v1/subscriptions/${id}/replay`, { from: new Date(now - 1000).toISOString(), to: now });
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.body.data[0].queued, 2);
      // both events of the range, in their order, with the ids they had (the second one a redelivery)
      assert.ok(await eventually(() => receiver.firstSeen.length === 2 && receiver.duplicates === 1, 5000));
      assert.equal(receiver.firstSeen[1]!.id, letter.eventId);
      assert.equal(receiver.badSignatures, 0);
    } finally {
      await receiver.down();
      await t.close();
    }
  });
});
