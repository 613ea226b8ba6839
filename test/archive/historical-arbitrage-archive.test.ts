// /historical/arbitrage reaches back through the tick archive: an arbitrage planted
// through the write path, then one of its legs repriced 60 times (its 50-entry history
// no longer reaches back), is replayed at its instant from the archive: the same record
// /arbitrage served live then. Real durable app, writes through the ingest path.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { NO_PRICE, SIDE_OVER, SIDE_UNDER } from '../../engine/oddsStore.ts';
import { HISTORY_CAPACITY } from '../../engine/historyRing.ts';
import type { ArbitrageRecord } from '../../engine/signals/records.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ARB = '/api/v1/historical/arbitrage';
let t: TestApp;
let archiveDir: string;

before(async () => {
  archiveDir = mkdtempSync(join(tmpdir(), 'odds-arb-archive-'));
  t = await startTestApp({ dataDir: true, env: { ARCHIVE_DIR: archiveDir, ARCHIVE_INTERVAL_MS: '3600000' } });
});

after(async () => {
  await t?.close();
  rmSync(archiveDir, { recursive: true, force: true });
});

/** A game total's OVER with an UNDER at the same line at another book, both quotable (as test/helpers/plantArbitrage.ts picks it). */
function overWithUnder(): string {
  const engine = t.app.engine;
  const s = engine.store;
  const quotable = (slot: number) => engine.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && s.suspended[slot] === 0 && engine.sources.kindOf(s.books.get(s.book[slot])) !== 'dfs';
  for (let slot = 0; slot < s.size; slot++) {
    if (s.side[slot] !== SIDE_OVER || !quotable(slot) || s.markets.get(s.market[slot]) !== 'TOTAL') continue;
    const list = engine.indexes.byEvent[s.event[slot]]!;
    for (let i = 0; i < list.length; i++) {
      const at = list.items[i]!;
      if (s.side[at] === SIDE_UNDER && s.book[at] !== s.book[slot] && s.subtype[at] === s.subtype[slot] && s.period[at] === s.period[slot] && s.line[at] === s.line[slot] && quotable(at)) return engine.idOf(slot);
    }
  }
  throw new Error('no game total with two books');
}

async function submit(changes: unknown[]): Promise<void> {
  t.clock.set(Math.floor(t.clock.now() / 1000) * 1000 + 1000);
  await t.app.durable!.durable.ingest.submit(changes);
}

test('an arbitrage whose leg has moved more than 50 times since is replayed from the archive, as /arbitrage served it then', async () => {
  const over = overWithUnder();
  await submit([{ op: 'price', id: over, priceAmerican: 400, suspended: false }]);
  const then = t.clock.now();
  const live = (await t.call('/api/v1/arbitrage', '/api/v1/arbitrage?min_profit=0&limit=1000')).body.data as ArbitrageRecord[];
  const planted = live.find((record) => record.legs.some((leg) => leg.oddsId === over));
  assert.ok(planted !== undefined, 'the planted arbitrage is live');
  await t.app.durable!.archive!.flush();
  // the leg moves on: 60 new prices, one a second, half of them before the next flush
  for (let n = 0; n < 60; n++) {
    await submit([{ op: 'price', id: over, priceAmerican: n % 2 === 0 ? -110 : -112 }]);
    if (n === 30) await t.app.durable!.archive!.flush();
  }
  const slot = t.app.engine.slotOf(over);
  const handle = t.app.engine.store.ring[slot]!;
  assert.equal(t.app.engine.rings.length(handle), HISTORY_CAPACITY);
  assert.ok(t.app.engine.rings.fs(handle, 0) * 1000 > then, "the leg's history no longer reaches back");
  const replayed = (await t.call(ARB, `${ARB}?to=${new Date(then).toISOString()}&min_profit=0&limit=1000`)).body.data as ArbitrageRecord[];
  const found = replayed.find((record) => record.legs.some((leg) => leg.oddsId === over));
  assert.deepEqual(found, planted);
  // and now, with the leg at -110/-112, it is gone
  const now = (await t.call(ARB, `${ARB}?to=${new Date(t.clock.now()).toISOString()}&min_profit=0&limit=1000`)).body.data as ArbitrageRecord[];
  assert.ok(!now.some((record) => record.id === planted.id && record.legs.some((leg) => leg.oddsId === over && leg.priceAmerican === 400)));
});
