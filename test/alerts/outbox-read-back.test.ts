// Endpoints behind together (after a restart, or an outage of their receivers) read the
// outbox back through shared blocks (alerts/outboxReadBack.ts): over a real alerts.db,
// fifty subscriptions with different filters and cursors, rebuilt after a restart (no
// event in memory), drained in turns while more events are written: each gets exactly
// the outbox's events its filters take after its cursor, in order, with the bytes stored;
// the outbox is read once per stretch, not once per subscription; a delivery of
// consecutive read-back events is one piece of body. And a prune never deletes the
// newest event, whose seq SQLite would otherwise give again to the next one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AlertEvent } from '../../alerts/alertEvent.ts';
import { openAlertsDatabase } from '../../alerts/alertsDatabase.ts';
import { AlertsStore, type Subscription } from '../../alerts/alertsStore.ts';
import { DeliveryQueue } from '../../alerts/deliveryQueue.ts';
import { deliveryBody } from '../../alerts/deliveryWorker.ts';
import { anyMatches, parseFilters } from '../../alerts/filters.ts';
import { BLOCK_EVENTS } from '../../alerts/outboxReadBack.ts';

const LEAGUES = ['nba', 'nfl', 'nhl', 'mlb', 'epl'];

function statusEvent(i: number): AlertEvent {
  // a non-ASCII league now and then: byte offsets in a block are not character offsets
  const league = i % 17 === 0 ? 'ligue-été' : LEAGUES[i % LEAGUES.length]!;
  return { id: `evt_${i}`, type: 'event.status_changed', createdAt: 1000 + i, data: { eventId: `ev-${i % 7}`, league, from: 'scheduled', to: 'in_progress' } };
}

function subscription(n: number, cursor: number): Subscription {
  // the last one takes every event; the others two of the seven events' changes
  const eventIds = n === 49 ? Array.from({ length: 7 }, (_, e) => `ev-${e}`) : [`ev-${n % 7}`, `ev-${(n * 3 + 1) % 7}`];
  return {
    id: `sub_${n}`, url: 'http://127.0.0.1:1/', secret: 'x'.repeat(16), filters: parseFilters([{ type: 'event_status', eventIds }]), batchWindowMs: 0, maxBatchEvents: 300, description: null, enabled: true,
    createdAt: 0, updatedAt: 0, cursor, attempts: 0, failingSince: null, nextAttemptAt: null, lastStatus: null, lastError: null, lastDeliveredAt: null, deliveredEvents: 0,
  };
}

function write(store: AlertsStore, from: number, to: number): void {
  for (let i = from; i < to; i += 250) {
    store.append(Array.from({ length: Math.min(250, to - i) }, (_, k) => statusEvent(i + k)).map((event) => ({ event, body: JSON.stringify(event) })));
  }
}

test('subscriptions behind together get their events in order from shared blocks, each stretch of the outbox read once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-readback-'));
  try {
    const path = join(dir, 'alerts.db');
    const first = new AlertsStore(openAlertsDatabase(path));
    write(first, 0, 5000);
    first.close();
    // the restart: nothing in memory, every queue rebuilt from its cursor
    const store = new AlertsStore(openAlertsDatabase(path));
    const subs = Array.from({ length: 50 }, (_, n) => subscription(n, (n * 97) % 1500));
    const queues = subs.map((s) => new DeliveryQueue(s, store, false));
    const got = subs.map(() => [] as string[]);
    let pieces = 0;
    let batches = 0;
    const turn = (): boolean => {
      let any = false;
      queues.forEach((queue, n) => {
        const batch = queue.next(subs[n]!.maxBatchEvents);
        if (batch === null) return;
        any = true;
        const events = store.events(batch.seqs);
        const body = deliveryBody(subs[n]!.id, 'd', events);
        for (const e of events) {
          // read back: a view of its block's buffer; written by this process: made by the delivery
          assert.equal(Buffer.from(e.bytes!).toString('utf8'), e.body, `event ${e.seq}: its bytes are its body`);
          got[n]!.push(e.id);
        }
        assert.deepEqual((JSON.parse(Buffer.concat(body).toString('utf8')) as { events: AlertEvent[] }).events.map((e) => e.id), events.map((e) => e.id));
        if (n === 49 && events[events.length - 1]!.seq <= 5000) {
          pieces += body.length;
          batches++;
        }
        queue.done(batch);
      });
      return any;
    };
    // half way, while they are behind, more events come (the newest block grows)
    for (let i = 0; i < 6; i++) turn();
    const readsBefore = store.readBack.reads;
    assert.ok(readsBefore <= Math.ceil(5000 / BLOCK_EVENTS) + 1, `50 subscriptions read ${readsBefore} stretches for ${Math.ceil(5000 / BLOCK_EVENTS)} blocks`);
    for (let i = 5000; i < 7000; i += 250) {
      write(store, i, i + 250);
      // the producer's offer: ignored by a queue still reading back, taken by one caught up
      const seqs = Array.from({ length: 250 }, (_, k) => store.lastSeq() - 249 + k);
      queues.forEach((queue, n) => seqs.forEach((seq, k) => queue.offer(seq, anyMatches(subs[n]!.filters, statusEvent(i + k)))));
      turn();
    }
    while (turn());
    const db = openAlertsDatabase(path);
    try {
      const rows = (db.prepare('SELECT seq, body FROM alert_events ORDER BY seq').all() as { seq: number; body: string }[]).map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as AlertEvent }));
      subs.forEach((s, n) => {
        const cursor = (n * 97) % 1500;
        const expected = rows.filter((r) => r.seq > cursor && anyMatches(s.filters, r.event)).map((r) => r.event.id);
        assert.deepEqual(got[n], expected, `${s.id}: every event its filters take after its cursor, once, in order`);
      });
    } finally {
      db.close();
    }
    // 7,000 events in 7 blocks: each read once, plus the newest blocks' growth (a read per tick at most)
    assert.ok(store.readBack.reads <= Math.ceil(7000 / BLOCK_EVENTS) + 8 + 1, `${store.readBack.reads} reads`);
    // consecutive read-back events go as one piece: a batch of 300 is its head, a run or two and the close, not a piece per event
    assert.ok(batches >= 3 && pieces / batches <= 6, `${pieces} pieces in ${batches} batches`);
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a prune keeps the newest event, so the next event gets a seq past every cursor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-readback-'));
  try {
    const store = new AlertsStore(openAlertsDatabase(join(dir, 'alerts.db')));
    write(store, 0, 10);
    const newest = store.lastSeq();
    // every event old and delivered: all may go but the newest
    assert.equal(store.prune(Number.MAX_SAFE_INTEGER, newest), 9);
    write(store, 10, 11);
    assert.equal(store.lastSeq(), newest + 1);
    assert.deepEqual(store.events([newest, newest + 1]).map((e) => e.id), ['evt_9', 'evt_10']);
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
