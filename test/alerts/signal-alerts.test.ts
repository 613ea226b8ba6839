// Arbitrage and edge alerts from the signal books, through the real write path: a price
// sent to the ingest listener opens an arbitrage (the OVER of a game total at +400
// against another book's UNDER), then a second one restores the price and closes it;
// a DFS multiplier raised to 2 lifts a pick's edge over a threshold. Each subscription
// receives what its threshold lets through, and nothing that was on the board before
// it started is reported as new.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { NOW, startTestApp, testBoard, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { plantArbitrage } from '../helpers/plantArbitrage.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { admin } from '../../fixtures/harness/adminClient.ts';
import { Receiver } from './receivers.ts';

describe('signal alerts', () => {
  let t: TestApp;
  let token: string;
  let port: number;
  const receivers: Receiver[] = [];

  before(async () => {
    t = await startTestApp({ dataDir: true, env: { ALERTS_TICK_MS: '20', ALERTS_RETRY_BASE_MS: '20', ALERTS_RETRY_MAX_MS: '100' } });
    token = t.app.durable!.token.token;
    port = t.app.durable!.listener.port;
  });
  after(async () => {
    for (const r of receivers) await r.down();
    await t.close();
  });

  async function subscribe(filters: unknown[]): Promise<Receiver> {
    const r = new Receiver();
    await r.up();
    receivers.push(r);
    const created = await admin(port, token, 'POST', '/alerts/v1/subscriptions/create', { url: r.url, filters });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    r.secret = created.body.data[0].secret;
    return r;
  }

  async function submit(changes: unknown[]): Promise<void> {
    const reply = await postBatch(port, token, ndjson(changes));
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  }

  it('reports an arbitrage opening and closing to the subscriptions whose minimum profit it reaches', async () => {
    // the row to reprice, found on a copy of the board (plantArbitrage applies to that copy only)
    const copy = new OddsEngine(new ManualClock(NOW));
    loadBoard(copy, testBoard('small'));
    const overId = plantArbitrage(copy);
    const original = t.app.engine.rowObject(t.app.engine.slotOf(overId), 'all').priceAmerican as number;

    const low = await subscribe([{ type: 'arbitrage', minProfit: 0.05 }]);
    const high = await subscribe([{ type: 'arbitrage', minProfit: 5 }]);
    const otherLeague = await subscribe([{ type: 'arbitrage', minProfit: 0, leagues: ['no-such-league'] }]);
    await submit([{ op: 'price', id: overId, priceAmerican: 400 }]);
    assert.ok(await eventually(() => low.firstSeen.some((e) => e.type === 'arbitrage.opened'), 5000), 'opened delivered');
    const opened = low.firstSeen.find((e) => e.type === 'arbitrage.opened')!;
    const record = opened.data.arbitrage;
    assert.ok(record.legs.some((leg: { oddsId: string }) => leg.oddsId === overId));
    assert.ok(record.profit >= 0.05);
    assert.equal(opened.data.previousProfit, null);
    // the record is the one /arbitrage serves
    const served = JSON.parse((await t.request(`/api/v1/arbitrage?event_id=${record.eventId}&min_profit=0`)).body.toString('utf8')).data;
    assert.deepEqual(served.find((a: { id: string }) => a.id === record.id), record);

    await submit([{ op: 'price', id: overId, priceAmerican: original }]);
    assert.ok(await eventually(() => low.firstSeen.some((e) => e.type === 'arbitrage.closed' && e.data.arbitrage.id === record.id), 5000), 'closed delivered');
    const closed = low.firstSeen.find((e) => e.type === 'arbitrage.closed')!;
    assert.equal(closed.data.peakProfit, record.profit);
    // only this arbitrage moved: the ones on the board before the subscriptions are not "opened"
    assert.deepEqual(low.firstSeen.map((e) => [e.type, e.data.arbitrage.id]), [['arbitrage.opened', record.id], ['arbitrage.closed', record.id]]);
    assert.equal(high.requests, 0);
    assert.equal(otherLeague.requests, 0);
    assert.equal(low.badSignatures, 0);
  });

  it('reports a DFS pick whose edge rises past a threshold', async () => {
    const all = JSON.parse((await t.request('/api/v1/edges?min_edge=0&limit=1000')).body.toString('utf8')).data as { id: string; edge: number; fairProbability: number; dfsMultiplier: number }[];
    const pick = all.find((e) => e.edge < 0.1 && e.fairProbability > 0.45 && e.dfsMultiplier < 2);
    assert.ok(pick !== undefined, `no pick to lift among ${all.length} edges`);
    const watcher = await subscribe([{ type: 'edge', minEdge: 0.15 }]);
    await submit([{ op: 'price', id: pick.id, dfsMultiplier: 2 }]);
    assert.ok(await eventually(() => watcher.firstSeen.some((e) => e.data.edge?.id === pick.id), 5000), 'edge alert delivered');
    const event = watcher.firstSeen.find((e) => e.data.edge?.id === pick.id)!;
    assert.equal(event.type, 'edge.updated');
    assert.ok(event.data.edge.edge >= 0.15);
    assert.equal(event.data.previousEdge, pick.edge);
    assert.equal(event.data.edge.dfsMultiplier, 2);
  });
});
