// The trader screens over HTTP on the real app: /fair-lines, /best-prices, /ev and
// /middles equal the brute force over the /odds rows (default FAIR_LINE_BOOKS, weights
// 1, the 10-minute staleness window); a sharp price shortening past STEAM_THRESHOLD
// shows on /steam with the books that had not followed; parameters are validated.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { americanToDecimal, decimalToAmerican } from '../../engine/model.ts';
import { DEVIG_METHODS } from '../../engine/signals/devig.ts';
import type { OddsRowJson } from '../helpers/bruteForce.ts';
import { referenceBestPrices, referenceFairLines, referenceMiddles, referencePositiveEv } from '../helpers/screensBruteForce.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

let t: TestApp;
const SHARP = [{ sportsbook: 'pinnacle', weight: 1 }, { sportsbook: 'circa', weight: 1 }, { sportsbook: 'bookmaker', weight: 1 }];
const STALENESS_MS = 10 * 60 * 1000;

before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

const rows = (): OddsRowJson[] => boardRows(t.app.engine, 'all') as OddsRowJson[];

/** An event whose markets have fair lines, so the filtered answers are small and not empty. */
function someEvent(): string {
  const lines = referenceFairLines(rows(), t.clock.now(), 'multiplicative', SHARP, STALENESS_MS);
  assert.ok(lines.length > 0, 'the board has fair lines');
  return lines[Math.floor(lines.length / 2)]!.eventId;
}

test('/fair-lines, /best-prices, /ev and /middles equal the brute force for one event, under several devig methods', async () => {
  const event = someEvent();
  const mine = (r: { eventId: string }) => r.eventId === event;
  for (const devig of ['multiplicative', 'power', 'odds_ratio', 'jensen_shannon'] as const) {
    const { reply, body } = await t.call('/api/v1/fair-lines', `/api/v1/fair-lines?event_id=${event}&devig=${devig}&limit=1000`);
    assert.equal(reply.status, 200);
    assert.ok(body.data.length > 0);
    assert.deepEqual(body.data, referenceFairLines(rows(), t.clock.now(), devig, SHARP, STALENESS_MS).filter(mine), devig);
    const ev = await t.call('/api/v1/ev', `/api/v1/ev?event_id=${event}&devig=${devig}&min_ev=-1&limit=1000`);
    assert.deepEqual(ev.body.data, referencePositiveEv(rows(), t.clock.now(), devig, -1, SHARP, STALENESS_MS).filter(mine), `ev ${devig}`);
  }
  const best = await t.call('/api/v1/best-prices', `/api/v1/best-prices?event_id=${event}&limit=1000`);
  assert.deepEqual(best.body.data, referenceBestPrices(rows()).filter(mine));
  const middles = await t.call('/api/v1/middles', `/api/v1/middles?event_id=${event}&max_cost=1&limit=1000`);
  assert.deepEqual(middles.body.data, referenceMiddles(rows(), 0, 1).filter(mine));
  // the low-hold screen and the +EV book filter
  const lowHold = await t.call('/api/v1/best-prices', '/api/v1/best-prices?max_hold=0.02&limit=1000');
  assert.deepEqual(lowHold.body.data, referenceBestPrices(rows(), 0.02).slice(0, 1000));
  const dk = await t.call('/api/v1/ev', '/api/v1/ev?sportsbook=draftkings&min_ev=0.02&limit=1000');
  assert.deepEqual(dk.body.data, referencePositiveEv(rows(), t.clock.now(), 'multiplicative', 0.02, SHARP, STALENESS_MS, ['draftkings']).slice(0, 1000));
});

test('a pinnacle price shortening by 2 points or more is on /steam with the books still paying more', async () => {
  const all = rows();
  const sharp = all.find((r) => r.sportsbook === 'pinnacle' && r.market === 'TOTAL' && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined && r.priceDecimal > 1.6 && r.priceDecimal < 2.4)!;
  assert.ok(sharp !== undefined, 'a pinnacle total on the board');
  const engine = t.app.engine;
  t.clock.advance(1000);
  const to = decimalToAmerican(1 / (1 / sharp.priceDecimal! + 0.05));
  engine.apply([{ op: 'price', slot: engine.slotOf(sharp.id), priceAmerican: to, suspended: false }]);
  const { body } = await t.call('/api/v1/steam', `/api/v1/steam?event_id=${sharp.eventId}&sportsbook=pinnacle`);
  assert.equal(body.data.length, 1);
  const move = body.data[0];
  assert.equal(move.oddsId, sharp.id);
  assert.equal(move.fromPriceAmerican, sharp.priceAmerican);
  assert.equal(move.toPriceAmerican, to);
  assert.ok(move.movePoints >= 2);
  const expectedStale = rows().filter((r) => r.eventId === sharp.eventId && r.marketSubtype === sharp.marketSubtype && r.period === sharp.period && r.line === sharp.line
    && r.side === sharp.side && r.id !== sharp.id && r.dfsMultiplier === undefined && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined && r.priceDecimal > americanToDecimal(to) && (r.playerId ?? null) === (sharp.playerId ?? null));
  assert.deepEqual(move.staleBooks.map((s: { oddsId: string }) => s.oddsId).sort(), expectedStale.map((r) => r.id).sort());
  const none = await t.call('/api/v1/steam', `/api/v1/steam?event_id=${sharp.eventId}&min_points=50`);
  assert.deepEqual(none.body.data, []);
});

test('parameters are validated: an unknown devig method lists all nine', async () => {
  const bad = await t.call('/api/v1/fair-lines', '/api/v1/fair-lines?devig=nope');
  assert.equal(bad.reply.status, 400);
  assert.deepEqual(bad.body.validValues, [...DEVIG_METHODS]);
  assert.equal((await t.call('/api/v1/ev', '/api/v1/ev?min_ev=abc')).reply.status, 400);
  assert.equal((await t.call('/api/v1/middles', '/api/v1/middles?limit=0')).reply.status, 400);
});
