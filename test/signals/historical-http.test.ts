// /api/v1/historical/odds and /api/v1/historical/arbitrage over HTTP on the real app
// (replayed from the price rings): they
// equal the live board now, and an earlier recorded state (board rows, /arbitrage)
// for a past instant, removed selections included while their history is kept.
// The clock moves in whole seconds here because ring times are whole seconds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { bruteForceArbitrage, type OddsRowJson } from '../helpers/bruteForce.ts';
import type { ArbitrageRecord } from '../../engine/signals/records.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows, compareRows, type Row } from '../helpers/oddsReference.ts';
import { plantArbitrage } from '../helpers/plantArbitrage.ts';

const ODDS = '/api/v1/historical/odds';
const ARB = '/api/v1/historical/arbitrage';
let t: TestApp;

before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

/** What /historical/odds must say of a live row whose price in force is its current one. */
function expectedRow(row: Row, asOf: string): Row {
  const out: Row = {
    id: row.id,
    eventId: row.eventId,
    sportsbook: row.sportsbook,
    market: row.market,
    marketSubtype: row.marketSubtype,
    period: row.period,
    selection: row.selection,
    side: row.side,
  };
  if (row.line !== undefined) out.line = row.line;
  out.priceAmerican = row.priceAmerican ?? null;
  out.asOf = asOf;
  out.suspended = row.suspended;
  return out;
}

/** The live board per event as /historical/odds rows, asOf from each row's newest ring entry. */
function liveState(): Map<string, Row[]> {
  const engine = t.app.engine;
  const byEvent = new Map<string, Row[]>();
  for (const row of boardRows(engine, 'all')) {
    const history = [...engine.history(engine.slotOf(row.id))];
    const asOf = new Date(history[history.length - 1].fs * 1000).toISOString();
    const list = byEvent.get(row.eventId) ?? [];
    list.push(expectedRow(row, asOf));
    byEvent.set(row.eventId, list);
  }
  for (const list of byEvent.values()) list.sort(compareRows); // /odds order: sportsbook, id
  return byEvent;
}

function step(seconds: number, changes: number): void {
  for (let i = 0; i < seconds; i++) {
    t.clock.advance(1000);
    t.app.simulator.step(changes);
  }
}

async function historical(eventId: string, date?: number): Promise<Row[]> {
  const query = date === undefined ? '' : `&date=${new Date(date).toISOString()}`;
  const { reply, body } = await t.call(ODDS, `${ODDS}?event_id=${encodeURIComponent(eventId)}${query}`);
  assert.equal(reply.status, 200);
  return body.data;
}

test('errors: event_id missing -> 400 missing_parameter, never-seen event -> 404, bad date -> 400', async () => {
  const missing = await t.call(ODDS, ODDS);
  assert.equal(missing.reply.status, 400);
  assert.equal(missing.body.code, 'missing_parameter');
  const unknown = await t.call(ODDS, `${ODDS}?event_id=nfl-19990101-xxx-yyy`);
  assert.equal(unknown.reply.status, 404);
  assert.equal(unknown.body.code, 'not_found');
  assert.equal((await t.call(ODDS, `${ODDS}?event_id=x&date=yesterday`)).body.code, 'invalid_parameter');
  assert.equal((await t.call(ARB, `${ARB}?from=2026-11-21T12:00:00Z&to=2026-11-21T11:00:00Z`)).body.code, 'invalid_parameter');
  assert.equal((await t.call(ARB, `${ARB}?limit=1001`)).body.code, 'invalid_parameter');
});

test('historical odds without a date and at now equal the live board, for every event', async () => {
  step(30, 20);
  const live = liveState();
  assert.ok(live.size > 5);
  for (const [eventId, rows] of live) {
    assert.deepEqual(await historical(eventId), rows, eventId);
    assert.deepEqual(await historical(eventId, t.clock.now()), rows, `${eventId} at now`);
  }
});

test('historical odds and arbitrage at a past instant equal the state recorded then; removed selections included', async () => {
  step(5, 20);
  const then = t.clock.now();
  const recorded = liveState();
  const arbitrageThen = (await t.call('/api/v1/arbitrage', '/api/v1/arbitrage?min_profit=0&limit=1000')).body.data as ArbitrageRecord[];
  assert.ok(arbitrageThen.length > 0, 'there is arbitrage to replay');

  // time passes: ticks, and one whole event's selection removed outright
  const [removedEvent, removedRows] = [...recorded].find(([, rows]) => rows.length > 10)!;
  t.clock.advance(1000);
  t.app.engine.apply([{ op: 'remove', id: removedRows[0].id }]);
  step(120, 25);
  const movedSince = [...recorded.values()].flat().filter((row) => {
    const slot = t.app.engine.slotOf(row.id);
    return !t.app.engine.isLive(slot) || t.app.engine.rowObject(slot, 'all').priceAmerican !== (row.priceAmerican ?? undefined);
  }).length;
  assert.ok(movedSince > 100, `the board moved on (${movedSince} rows differ)`);

  for (const [eventId, rows] of recorded) assert.deepEqual(await historical(eventId, then), rows, `${eventId} at the recorded instant`);
  const nowRows = await historical(removedEvent);
  assert.ok(!nowRows.some((row) => row.id === removedRows[0].id), 'a removed selection is out once removed');

  const replay = await t.call(ARB, `${ARB}?from=${new Date(then - 86_400_000).toISOString()}&to=${new Date(then).toISOString()}&min_profit=0&limit=1000`);
  assert.deepEqual(replay.body.data, arbitrageThen, 'historical arbitrage at to = /arbitrage captured then');
  const limited = await t.call(ARB, `${ARB}?from=${new Date(then - 86_400_000).toISOString()}&to=${new Date(then).toISOString()}&limit=1&min_profit=0`);
  assert.deepEqual(limited.body.data, arbitrageThen.slice(0, 1));
  const defaults = await t.call(ARB, `${ARB}?from=${new Date(then - 86_400_000).toISOString()}&to=${new Date(then).toISOString()}`);
  assert.deepEqual(defaults.body.data, arbitrageThen.filter((r) => r.profit >= 0.001), 'min_profit defaults to 0.001');
});

test('a date before any history leaves every selection out', async () => {
  const eventId = boardRows(t.app.engine, 'all')[0].eventId as string;
  assert.deepEqual(await historical(eventId, Date.parse('2020-01-01T00:00:00Z')), []);
});

test('staleness window at now: only prices last seen within to - from count; a single instant is a snapshot', async () => {
  step(60, 30);
  const to = t.clock.now();
  for (const minutes of [1, 10, 60 * 24]) {
    const from = to - minutes * 60_000;
    const fresh = (boardRows(t.app.engine, 'all') as OddsRowJson[]).filter((row) => Date.parse(row.updated) >= from);
    const expected = bruteForceArbitrage(fresh).filter((r) => r.profit >= 0);
    const { body } = await t.call(ARB, `${ARB}?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&min_profit=0&limit=1000`);
    assert.deepEqual(body.data, expected, `window ${minutes} min`);
    for (const record of body.data as ArbitrageRecord[]) for (const leg of record.legs) assert.ok(Date.parse(leg.updated) >= from);
  }
  // A single `to` (from = to) is a snapshot (OpenAPI description of /historical/arbitrage): every price in force at to,
  // which at now is exactly what the live board gives, whenever each price was last seen.
  const everyRow = boardRows(t.app.engine, 'all') as OddsRowJson[];
  const stale = everyRow.filter((row) => Date.parse(row.updated) < to - 60 * 60_000);
  assert.ok(stale.length > 0, 'the board holds prices last seen over an hour ago, so the snapshot differs from a narrow window');
  const snapshotExpected = bruteForceArbitrage(everyRow).filter((r) => r.profit >= 0);
  const snapshot = await t.call(ARB, `${ARB}?to=${new Date(to).toISOString()}&min_profit=0&limit=1000`);
  const exact = await t.call(ARB, `${ARB}?from=${new Date(to).toISOString()}&to=${new Date(to).toISOString()}&min_profit=0&limit=1000`);
  assert.deepEqual(snapshot.body.data, snapshotExpected);
  assert.deepEqual(snapshot.body.data, exact.body.data);
});

test('a leg re-quoted at the same price: historical arbitrage at to = now equals live /arbitrage, leg times included', async () => {
  // Per the OpenAPI descriptions: a live leg's updated is its row's updated ("when the
  // line last refreshed"), and a historical leg's is its last-seen time capped at to.
  // A same-price re-quote refreshes both (the row's updated, and the newest history
  // entry's last-seen), so at a whole-second now the two answers are the same records.
  const plantedId = plantArbitrage(t.app.engine);
  step(3, 20);
  const live = async () => (await t.call('/api/v1/arbitrage', '/api/v1/arbitrage?min_profit=0&limit=1000')).body.data as ArbitrageRecord[];
  const historicalNow = async () => {
    const to = new Date(t.clock.now()).toISOString();
    return (await t.call(ARB, `${ARB}?to=${to}&min_profit=0&limit=1000`)).body.data as ArbitrageRecord[];
  };
  const before = await live();
  const record = before.find((r) => r.legs.some((leg) => leg.oddsId === plantedId));
  assert.ok(record !== undefined, 'the planted arbitrage is live');
  const leg = record.legs.find((l) => l.oddsId === plantedId)!;

  t.clock.advance(5000);
  const slot = t.app.engine.slotOf(plantedId);
  t.app.engine.apply([{ op: 'price', slot, priceAmerican: leg.priceAmerican, suspended: false }]);
  const requotedAt = new Date(t.clock.now()).toISOString();

  const after = await live();
  const liveLeg = after.find((r) => r.id === record.id)!.legs.find((l) => l.oddsId === plantedId)!;
  assert.equal(liveLeg.priceAmerican, leg.priceAmerican, 'same price');
  assert.equal(liveLeg.updated, requotedAt, 'live: the re-quote refreshed the leg');
  assert.notEqual(liveLeg.updated, leg.updated);
  assert.deepEqual(await historicalNow(), after, 'historical arbitrage at to = now is live /arbitrage');
  const wide = await t.call(ARB, `${ARB}?from=${new Date(t.clock.now() - 86_400_000).toISOString()}&to=${requotedAt}&min_profit=0&limit=1000`);
  assert.deepEqual(wide.body.data, after, 'and with a window covering every price');
});
