// Fan-out across many connections: subscriptions on the same filter share a group (and,
// when their id and previous clk agree, the very bytes of each delta); a changed row is
// offered only to the groups filed under its event, league or sportsbook, plus those
// that restrict none of these (all rows, a market, a player). Whatever the path, every
// client ends holding exactly what /odds holds for its filter with an unbroken prev
// chain, a late joiner falls in step with the others, and groups disappear with their
// last subscription.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { httpRequest } from '../helpers/server.ts';
import { StreamTestClient, byId, oddsQuery, oddsRows, type Message } from './streamClient.ts';

interface Planned {
  filter: Record<string, string[]>;
  id: string;
  format?: 'json' | 'msgpack';
  oddsFormat?: string;
}

describe('stream fan-out over many connections', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 11 });
  });
  after(async () => {
    await t.close();
  });

  it('every subscription, whichever way its filter is indexed, holds /odds; shared filters share deltas; a late joiner falls in step', async () => {
    const engine = t.app.engine;
    const events = engine.eventIdsWithLiveRows().slice(0, 3);
    const books = engine.bookCounts().map((b) => b.id);
    const page = JSON.parse((await httpRequest(t.port, '/api/v1/odds?limit=1000')).body.toString('utf8')) as { data: { playerId?: string }[] };
    const player = page.data.find((row) => typeof row.playerId === 'string')?.playerId;
    assert.ok(player !== undefined, 'the board has a player row');

    const plan: Planned[] = [
      // the nba group: other ids and formats first, then five connections with one id
      // and format that get the same delta bytes (the late joiner below comes after them)
      { filter: { league: ['nba'] }, id: 'other-id' },
      { filter: { league: ['nba'] }, id: 's', format: 'msgpack' },
      { filter: { league: ['nba'] }, id: 's', oddsFormat: 'american' },
      ...Array.from({ length: 5 }, () => ({ filter: { league: ['nba'] }, id: 's' })),
      { filter: { league: ['nfl', 'nba'], market: ['total'] }, id: 's' },
      { filter: { eventId: events }, id: 's' },
      { filter: { eventId: events.slice(0, 1), sportsbook: books.slice(0, 2) }, id: 's' },
      { filter: { sportsbook: books.slice(0, 2) }, id: 's' },
      { filter: { market: ['spread'] }, id: 's' },
      { filter: { playerId: [player] }, id: 's' },
      { filter: {}, id: 's' },
      // an id whose UTF-8 bytes outnumber its characters, and one JSON must escape: the
      // delta's head is measured in bytes and written in front of its rows in one buffer
      { filter: { league: ['nba'] }, id: 'ü-s✓ "q"\\' },
    ];
    const clients: StreamTestClient[] = [];
    try {
      for (const sub of plan) {
        const client = await StreamTestClient.open(t.port);
        client.subscribe(sub.id, { filter: sub.filter, format: sub.format ?? 'json', oddsFormat: sub.oddsFormat ?? 'all' });
        clients.push(client);
      }
      await eventually(() => clients.every((client, i) => client.state(plan[i]!.id).images === 1), 20_000);
      const groupsOpen = t.app.stream.stats().groups;
      assert.equal(groupsOpen, new Set(plan.map((sub) => JSON.stringify(sub.filter))).size, 'one group per distinct filter');

      for (let i = 0; i < 20; i++) t.app.simulator.step(40);
      // A change outside nba moves the board on: the late joiner's image clk is past the
      // other nba subscriptions' last delta, so its first delta's prev differs from theirs.
      const nfl = JSON.parse((await httpRequest(t.port, '/api/v1/odds?league=nfl&limit=1')).body.toString('utf8')) as { data: { id: string; priceAmerican: number }[] };
      const moved = nfl.data[0]!;
      assert.equal(engine.apply([{ op: 'priceById', id: moved.id, priceAmerican: moved.priceAmerican === 150 ? 160 : 150 }]).applied, 1);
      // a late joiner on the shared filter: its first delta's prev is its own image's clk
      const late = await StreamTestClient.open(t.port);
      late.subscribe('s', { filter: { league: ['nba'] } });
      await eventually(() => late.state('s').images === 1, 20_000);
      await clients[3]!.sync();
      assert.notEqual(late.state('s').clk, clients[3]!.state('s').clk, "the late joiner's image is past the others' last delta");
      clients.push(late);
      plan.push({ filter: { league: ['nba'] }, id: 's' });
      // one subscription leaves and comes back under another id
      clients[9]!.send({ op: 'unsubscribe', id: 's' });
      clients[9]!.subscribe('again', { filter: { eventId: events } });
      plan[9] = { filter: { eventId: events }, id: 'again' };
      await eventually(() => clients[9]!.state('again').images === 1, 20_000);

      for (let i = 0; i < 20; i++) t.app.simulator.step(40);
      await Promise.all(clients.map((client) => client.sync()));

      for (const [i, sub] of plan.entries()) {
        const state = clients[i]!.state(sub.id);
        assert.deepEqual(state.breaks, [], `prev chain of ${JSON.stringify(sub)}`);
        const expected = await oddsRows(t.port, oddsQuery(sub.filter, sub.oddsFormat ?? 'all'));
        assert.deepEqual(byId(state.rows.values()), byId(expected), `rows of ${JSON.stringify(sub)}`);
      }
      // the shared-filter clients, the late joiner included, got the same last delta
      const lastDelta = (client: StreamTestClient, id: string): Message | undefined => client.messages.filter((m) => m.op === 'delta' && m.id === id).at(-1);
      const reference = lastDelta(clients[3]!, 's');
      assert.ok(reference !== undefined && reference.rows.length > 0, 'the nba subscriptions got deltas');
      for (const client of [...clients.slice(4, 8), late]) assert.deepEqual(lastDelta(client, 's'), reference);
      assert.equal(late.state('s').clk, clients[3]!.state('s').clk, 'the late joiner is at the same clk as the others');
      const msgpackLast = lastDelta(clients[1]!, 's');
      assert.ok(msgpackLast !== undefined && msgpackLast.__binary === true);
      assert.deepEqual({ ...msgpackLast, __binary: undefined }, { ...reference, __binary: undefined }, 'the msgpack delta carries the same message');
    } finally {
      for (const client of clients) client.close();
    }
    assert.ok(await eventually(() => t.app.stream.stats().groups === 0 && t.app.stream.stats().clients === 0, 10_000), 'groups go with their last subscription');
    // with no group left, a batch finds nobody to send to, and a new subscriber is indexed afresh
    t.app.simulator.step(40);
    const fresh = await StreamTestClient.open(t.port);
    try {
      fresh.subscribe('f', { filter: { league: ['nba'] } });
      await eventually(() => fresh.state('f').images === 1, 20_000);
      for (let i = 0; i < 10; i++) t.app.simulator.step(40);
      await fresh.sync();
      assert.ok(fresh.state('f').deltas > 0);
      assert.deepEqual(fresh.state('f').breaks, []);
      assert.deepEqual(byId(fresh.state('f').rows.values()), byId(await oddsRows(t.port, oddsQuery({ league: ['nba'] }, 'all'))));
    } finally {
      fresh.close();
    }
  });
});
