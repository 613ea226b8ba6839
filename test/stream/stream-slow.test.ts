// A client that stops reading its socket is conflated first, then, once its queued
// bytes pass the cap (STREAM_BUFFER_BYTES), told slow_consumer and disconnected, while
// another client on the same filter keeps getting one delta per applied batch with an
// unbroken prev chain and ends holding what /odds holds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { StreamTestClient, byId, oddsRows } from './streamClient.ts';

const CAP = 256 * 1024;

describe('slow consumers', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', env: { STREAM_BUFFER_BYTES: String(CAP) } });
  });
  after(async () => {
    await t.close();
  });

  // With two subscriptions on the slow connection, its deltas of a batch go out in one
  // corked write, and the push-back is seen after the cork.
  for (const slowSubscriptions of [['s'], ['s', 's2']]) {
    it(`a client that does not read is conflated, then dropped with slow_consumer; the other client's flow is unaffected${slowSubscriptions.length > 1 ? ' (two subscriptions on the slow connection)' : ''}`, async () => {
      const slow = await StreamTestClient.open(t.port);
      const fast = await StreamTestClient.open(t.port);
      try {
        for (const id of slowSubscriptions) slow.subscribe(id, id === 's' ? {} : { filter: { league: ['nba'] } });
        fast.subscribe('f', {});
        await eventually(() => slowSubscriptions.every((id) => slow.state(id).images === 1) && fast.state('f').images === 1, 20_000);
        const socket = (slow.ws as unknown as { _socket: Socket })._socket;
        socket.pause();

        const dropsBefore = t.app.stream.stats().slowConsumerDrops;
        let batches = 0;
        let sawConflating = false;
        let fastDeltasWhileSlowBackedUp = 0;
        const deadline = Date.now() + 60_000;
        while (t.app.stream.stats().slowConsumerDrops === dropsBefore && Date.now() < deadline) {
          t.app.simulator.step(300);
          batches++;
          const stats = t.app.stream.stats();
          if (stats.backedUpClients > 0 && stats.conflating > 0) {
            sawConflating = true;
            const before = fast.state('f').deltas;
            await fast.sync(); // the other client is answered while the slow one is stuck
            fastDeltasWhileSlowBackedUp += fast.state('f').deltas - before;
          }
          await sleep(5);
        }
        assert.equal(t.app.stream.stats().slowConsumerDrops, dropsBefore + 1, 'the slow client was dropped');
        assert.ok(sawConflating, 'the slow client was conflated before it was dropped');
        assert.ok(fastDeltasWhileSlowBackedUp > 0, 'the other client got deltas while the slow one was backed up');

        // The fast client's chain is unbroken and it holds /odds.
        await fast.sync();
        const state = fast.state('f');
        assert.ok(state.deltas > 0 && state.deltas <= batches);
        assert.deepEqual(state.breaks, []);
        assert.deepEqual(byId(state.rows.values()), byId(await oddsRows(t.port, '')));

        // The slow client reads again: what was queued, then slow_consumer and the close.
        socket.resume();
        assert.ok(await eventually(() => slow.closed !== null, 20_000), 'the slow client was disconnected');
        assert.equal(slow.closed!.code, 1008);
        assert.equal(slow.closed!.reason, 'slow_consumer');
        for (const id of slowSubscriptions) assert.deepEqual(slow.state(id).breaks, [], 'what the slow client did get is chained: it can resume');
        const last = slow.messages.at(-1);
        if (last?.op === 'status') assert.equal(last.code, 'slow_consumer');
        assert.equal(t.app.stream.stats().clients, 1);
      } finally {
        slow.close();
        fast.close();
      }
    });
  }
});
