// A subscription's queue over a real outbox file: past LANE_CAP pending events it stops
// holding them in memory and reads them back from the outbox once drained, and after a
// restart it rebuilds from its cursor; either way every matching event comes out once,
// in outbox order, and the others never.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AlertEvent } from '../../alerts/alertEvent.ts';
import { openAlertsDatabase } from '../../alerts/alertsDatabase.ts';
import { AlertsStore, type Subscription } from '../../alerts/alertsStore.ts';
import { DeliveryQueue, LANE_CAP } from '../../alerts/deliveryQueue.ts';
import { anyMatches, parseFilters } from '../../alerts/filters.ts';

function subscription(filters: unknown): Subscription {
  return {
    id: 'sub_test', url: 'http://127.0.0.1:1/', secret: 'x'.repeat(16), filters: parseFilters(filters), batchWindowMs: 0, maxBatchEvents: 700, description: null, enabled: true,
    createdAt: 0, updatedAt: 0, cursor: 0, attempts: 0, failingSince: null, nextAttemptAt: null, lastStatus: null, lastError: null, lastDeliveredAt: null, deliveredEvents: 0,
  };
}

function statusEvent(i: number): AlertEvent {
  return { id: `evt_${i}`, type: 'event.status_changed', createdAt: i, data: { eventId: `ev-${i % 3}`, league: 'nba', from: 'scheduled', to: 'in_progress' } };
}

function drain(queue: DeliveryQueue, store: AlertsStore): string[] {
  const ids: string[] = [];
  for (let batch = queue.next(700); batch !== null; batch = queue.next(700)) {
    for (const e of store.events(batch.seqs)) ids.push(e.id);
    queue.done(batch);
  }
  return ids;
}

test('past its memory cap a queue reads the rest back from the outbox, and a restart rebuilds it from the cursor: each matching event once, in order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-queue-'));
  try {
    const path = join(dir, 'alerts.db');
    let store = new AlertsStore(openAlertsDatabase(path));
    const sub = subscription([{ type: 'event_status', eventIds: ['ev-0', 'ev-1'] }]);
    const queue = new DeliveryQueue(sub, store, true);
    const total = Math.ceil(LANE_CAP * 1.8);
    const events = Array.from({ length: total }, (_, i) => statusEvent(i));
    const expected = events.filter((e) => anyMatches(sub.filters, e)).map((e) => e.id);
    assert.ok(expected.length > LANE_CAP);
    // written in ticks of 500, offered as the producer does
    for (let i = 0; i < total; i += 500) {
      const tick = events.slice(i, i + 500);
      const seqs = store.append(tick.map((event) => ({ event, body: JSON.stringify(event) })));
      tick.forEach((event, k) => queue.offer(seqs[k]!, anyMatches(sub.filters, event)));
    }
    assert.equal(queue.pending(), expected.length);
    // deliver past the memory cap (the rest read back from the outbox), then "restart": a
    // new store and queue from the cursor the subscription reached
    const firstHalf: string[] = [];
    while (firstHalf.length < LANE_CAP + 600) {
      const batch = queue.next(700)!;
      for (const e of store.events(batch.seqs)) firstHalf.push(e.id);
      queue.done(batch);
    }
    assert.deepEqual(firstHalf, expected.slice(0, firstHalf.length));
    store.close();
    store = new AlertsStore(openAlertsDatabase(path));
    const rebuilt = new DeliveryQueue({ ...sub }, store, false);
    assert.equal(rebuilt.pending(), expected.length - firstHalf.length);
    assert.deepEqual(drain(rebuilt, store), expected.slice(firstHalf.length));
    assert.equal(rebuilt.pending(), 0);
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
