// The tick archive's routes on the real server (DATA_DIR and ARCHIVE_DIR in temp
// dirs), fed through the write path: a moneyline's prices at one book before and
// after its event's start, then the ticks, market, closing and CLV routes against
// values computed by hand, every reply validated against the served OpenAPI document.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let archiveDir: string;
let home: string;
let away: string;
let eventId: string;
let start: number;

before(async () => {
  archiveDir = mkdtempSync(join(tmpdir(), 'odds-archive-'));
  t = await startTestApp({ dataDir: true, env: { ARCHIVE_DIR: archiveDir, ARCHIVE_INTERVAL_MS: '3600000' } });
  const engine = t.app.engine;
  // a pinnacle moneyline whose event starts after the clock
  const s = engine.store;
  for (let slot = 0; slot < s.size && home === undefined; slot++) {
    if (!s.isLive(slot) || s.books.get(s.book[slot]) !== 'pinnacle' || s.subtypes.get(s.subtype[slot]) !== 'MONEYLINE') continue;
    const id = engine.idOf(slot);
    const [ev] = id.split(':');
    const event = engine.event(ev)!;
    if (event.startTime < t.clock.now() + 3_600_000 || event.isFutures) continue;
    const other = `${ev}:pinnacle:MONEYLINE:FULL-AWAY`;
    if (!id.endsWith(':FULL-HOME') || engine.slotOf(other) < 0) continue;
    home = id;
    away = other;
    eventId = ev;
    start = event.startTime;
  }
  assert.ok(home !== undefined, 'the small board has a pinnacle moneyline');
});

after(async () => {
  await t.close();
  rmSync(archiveDir, { recursive: true, force: true });
});

async function submit(at: number, changes: unknown[]): Promise<void> {
  t.clock.set(at);
  await t.app.durable!.durable.ingest.submit(changes);
}

test('ticks, market, closing and CLV answer from the archive, against hand-computed values', async () => {
  const t1 = start - 3_000_000;
  const t2 = start - 2_000_000;
  const t3 = start - 1_000_000;
  const t4 = start + 60_000;
  await submit(t1, [
    { op: 'price', id: home, priceAmerican: -110 },
    { op: 'price', id: away, priceAmerican: 100 },
  ]);
  await submit(t2, [
    { op: 'price', id: home, priceAmerican: -120 },
    { op: 'price', id: away, priceAmerican: 105 },
  ]);
  await submit(t3, [{ op: 'price', id: home, suspended: true }]);
  // archived to Parquet here; the rest stays pending and is read from the log's copies
  const flushed = await t.app.durable!.archive!.flush();
  assert.ok(flushed !== null && flushed.rows === 5 && flushed.files.length >= 1, JSON.stringify(flushed));
  await submit(t4, [{ op: 'price', id: home, priceAmerican: 100, suspended: false }]);

  const ticks = await t.call('/api/v1/history/ticks', `/api/v1/history/ticks?id=${encodeURIComponent(home)}&limit=2`);
  assert.equal(ticks.reply.status, 200);
  assert.deepEqual(
    ticks.body.data.map((p: { priceAmerican: number; suspended: boolean }) => [p.priceAmerican, p.suspended]),
    [
      [-110, false],
      [-120, false],
    ],
  );
  assert.ok(ticks.body.nextCursor !== null);
  const rest = await t.call('/api/v1/history/ticks', `/api/v1/history/ticks?id=${encodeURIComponent(home)}&limit=2&cursor=${ticks.body.nextCursor}`);
  // the suspension toggle keeps -120; the tick after the start (pending, not yet in a file) is there too
  assert.deepEqual(
    rest.body.data.map((p: { priceAmerican: number; suspended: boolean; time: string }) => [p.priceAmerican, p.suspended, Date.parse(p.time)]),
    [
      [-120, true, t3],
      [100, false, t4],
    ],
  );
  assert.equal(rest.body.nextCursor, null);
  const bad = await t.request(`/api/v1/history/ticks?id=${encodeURIComponent(away)}&cursor=${ticks.body.nextCursor}`);
  assert.equal(bad.status, 400);

  const market = await t.call('/api/v1/history/market', `/api/v1/history/market?event_id=${eventId}&market_subtype=MONEYLINE&sportsbook=pinnacle&from=${t2}&to=${t3}`);
  assert.deepEqual(
    market.body.data.map((p: { id: string; priceAmerican: number }) => [p.id, p.priceAmerican]),
    [
      [home, -120],
      [away, 105],
      [home, -120],
    ],
  );

  const closing = await t.call('/api/v1/history/closing', `/api/v1/history/closing?event_id=${eventId}&market_subtype=MONEYLINE&sportsbook=pinnacle`);
  const byId = new Map(closing.body.data.map((row: { id: string }) => [row.id, row]));
  const h = byId.get(home) as any;
  const a = byId.get(away) as any;
  assert.equal(h.opening.priceAmerican, -110);
  assert.equal(h.closing.priceAmerican, -120, 'the close is the last price before the start, not the +100 after it');
  assert.equal(h.closing.suspended, true);
  assert.equal(a.closing.priceAmerican, 105);
  // by hand: decimals 1.8333 and 2.05; multiplicative: (1/1.8333) / (1/1.8333 + 1/2.05)
  assert.ok(Math.abs(h.noVigProbability - 0.5279015270517343) < 1e-12, String(h.noVigProbability));
  assert.ok(Math.abs(a.noVigProbability - 0.4720984729482656) < 1e-12, String(a.noVigProbability));

  const clv = await t.call('/api/v1/history/clv', `/api/v1/history/clv?id=${encodeURIComponent(home)}&price=100&devig=multiplicative`);
  const v = clv.body.data[0];
  // raw: 2 / 1.8333 - 1; no-vig: 2 x 0.5279015270517343 - 1
  assert.ok(Math.abs(v.clv - 0.09092892598047242) < 1e-12, String(v.clv));
  assert.ok(Math.abs(v.clvNoVig - 0.05580305410346864) < 1e-12, String(v.clvNoVig));
  assert.ok(Math.abs(v.noVigClosingDecimal - 1.8942926829268294) < 1e-9);
  // the price taken defaults to the one in force then: -110 at t1 -> 1.9091; 1.9091 / 1.8333 - 1
  const atT1 = await t.call('/api/v1/history/clv', `/api/v1/history/clv?id=${encodeURIComponent(home)}&taken_at=${t1 + 1}`);
  assert.equal(atT1.body.data[0].priceAmerican, -110);
  assert.ok(Math.abs(atT1.body.data[0].clv - (1.9091 / 1.8333 - 1)) < 1e-12);
});

test('export: a day as a Parquet file over HTTP', async () => {
  await t.app.durable!.archive!.flush();
  const day = new Date(start - 3_000_000).toISOString().slice(0, 10);
  const reply = await t.request(`/api/v1/history/export?day=${day}`);
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['content-type'], 'application/vnd.apache.parquet');
  const body = reply.body as Buffer;
  assert.equal(body.subarray(0, 4).toString('latin1'), 'PAR1');
  assert.equal(body.subarray(body.length - 4).toString('latin1'), 'PAR1');
  const none = await t.request('/api/v1/history/export?day=2001-01-01');
  assert.equal(none.status, 404);
  const badDay = await t.request('/api/v1/history/export?day=2001-02-30');
  assert.equal(badDay.status, 400);
});

test('/historical/odds reaches back through the archive past the 50-entry rings', async () => {
  const at = t.clock.now();
  // 60 changes of the away price after `at`: its ring no longer reaches back to it
  for (let i = 1; i <= 60; i++) await submit(at + i * 1000, [{ op: 'price', id: away, priceAmerican: 110 + i }]);
  const { body } = await t.call('/api/v1/historical/odds', `/api/v1/historical/odds?event_id=${eventId}&date=${at}`);
  const row = body.data.find((r: { id: string }) => r.id === away);
  assert.ok(row !== undefined, 'the away selection is answered from the archive');
  assert.equal(row.priceAmerican, 105, 'the price in force at date: set before the start, 60 changes ago');
  assert.equal(Date.parse(row.asOf), start - 2_000_000);
  const ids = body.data.map((r: { sportsbook: string; id: string }) => `${r.sportsbook} ${r.id}`);
  assert.deepEqual(ids, [...ids].sort(), 'rows stay in (sportsbook, id) order');
});
