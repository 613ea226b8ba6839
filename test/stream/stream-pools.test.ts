// Subscriptions that name values the board does not hold yet: an event id, a player id.
// A compiled filter reads the store's string pools; when a pool grows (a new event, a
// new player is interned) the filter rebuilds the masks of that pool, and only those.
// Each subscription below restricts a different set of dimensions, so a new event or
// player is seen by the filters that name it, and the ones that do not keep matching
// what they matched: every client ends holding exactly what /odds holds, unbroken.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { inputOf, liveSlots } from '../helpers/engine-helpers.ts';
import { StreamTestClient, byId, oddsQuery, oddsRows } from './streamClient.ts';

describe('stream filters and values first seen after the subscribe', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 23 });
  });
  after(async () => {
    await t.close();
  });

  it('a new event and a new player reach the subscriptions that name them; the others keep their rows', async () => {
    const engine = t.app.engine;
    const slot = liveSlots(engine).find((s) => engine.store.player[s]! >= 0) ?? liveSlots(engine)[0]!;
    const template = inputOf(engine, slot);
    const newEvent = `${template.eventId}-late-1`;
    const newPlayer = 'player-late-1';
    const filters: Record<string, string[]>[] = [
      { eventId: [newEvent] },
      { eventId: [newEvent, template.eventId], sportsbook: [template.sportsbook] },
      { league: [template.league] },
      { sportsbook: [template.sportsbook], market: [template.market.toUpperCase()] },
      { playerId: [newPlayer] },
      { eventId: [template.eventId] },
    ];
    const clients: StreamTestClient[] = [];
    try {
      for (const filter of filters) {
        const client = await StreamTestClient.open(t.port);
        client.subscribe('s', { filter });
        clients.push(client);
      }
      await eventually(() => clients.every((client) => client.state('s').images === 1), 20_000);
      assert.equal(clients[0]!.state('s').rows.size, 0, 'the event does not exist yet');

      for (let i = 0; i < 5; i++) t.app.simulator.step(40);
      // the event and the player appear (interned now), then the board moves on
      const first = { ...template, eventId: newEvent, selectionId: `${template.selectionId}-late`, playerId: newPlayer, playerName: 'Late Player' };
      const second = { ...template, eventId: newEvent, selectionId: `${template.selectionId}-late-b` };
      assert.equal(engine.apply([{ op: 'upsert', row: first }, { op: 'upsert', row: second }]).applied, 2);
      for (let i = 0; i < 5; i++) t.app.simulator.step(40);
      await Promise.all(clients.map((client) => client.sync()));

      for (const [i, filter] of filters.entries()) {
        const state = clients[i]!.state('s');
        assert.deepEqual(state.breaks, [], `prev chain of ${JSON.stringify(filter)}`);
        const expected = await oddsRows(t.port, oddsQuery(filter, 'all'));
        assert.deepEqual(byId(state.rows.values()), byId(expected), `rows of ${JSON.stringify(filter)}`);
      }
      assert.equal(clients[0]!.state('s').rows.size, 2, 'the new event reached the subscription naming it');
      assert.equal(clients[4]!.state('s').rows.size, 1, 'the new player reached the subscription naming it');
    } finally {
      for (const client of clients) client.close();
    }
  });
});
