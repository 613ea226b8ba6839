// /api/v1/historical/price-history over HTTP on the real app: one selection's rows at
// every book (ids equal but for the sportsbook part) with the same history the engine's
// rings hold, a strong ETag that holds while the selection is unchanged and moves when
// its price moves, removed selections kept with removed: true, and clear errors.
// The clock moves in whole seconds because ring times are whole seconds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

const PATH = '/api/v1/historical/price-history';
let t: TestApp;

before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

function withoutBook(id: string): string {
  const [eventId, , subtype, selection] = id.split(':');
  return `${eventId}:${subtype}:${selection}`;
}

/** A selection quoted by the most books on the board, and its ids sorted as /odds orders them. */
function widestSelection(): { ids: string[]; books: string[] } {
  const byLine = new Map<string, { id: string; sportsbook: string }[]>();
  for (const row of boardRows(t.app.engine, 'all')) {
    const list = byLine.get(withoutBook(row.id)) ?? [];
    list.push({ id: row.id, sportsbook: row.sportsbook });
    byLine.set(withoutBook(row.id), list);
  }
  const widest = [...byLine.values()].sort((a, b) => b.length - a.length)[0]!;
  widest.sort((a, b) => (a.sportsbook < b.sportsbook ? -1 : a.sportsbook > b.sportsbook ? 1 : a.id < b.id ? -1 : 1));
  return { ids: widest.map((r) => r.id), books: widest.map((r) => r.sportsbook) };
}

test('errors: id missing -> 400 missing_parameter, not an odds id -> 400, unknown event or selection -> 404', async () => {
  const missing = await t.call(PATH, PATH);
  assert.equal(missing.reply.status, 400);
  assert.equal(missing.body.code, 'missing_parameter');
  const malformed = await t.call(PATH, `${PATH}?id=a:b`);
  assert.equal(malformed.reply.status, 400);
  assert.equal(malformed.body.code, 'invalid_parameter');
  assert.equal(malformed.body.param, 'id');
  const unknownEvent = await t.call(PATH, `${PATH}?id=${encodeURIComponent('nfl-19990101-xxx-yyy:pinnacle:MONEYLINE:x')}`);
  assert.equal(unknownEvent.reply.status, 404);
  assert.equal(unknownEvent.body.code, 'not_found');
  const some = widestSelection().ids[0]!;
  const [eventId, book, subtype] = some.split(':');
  const unknownSelection = await t.call(PATH, `${PATH}?id=${encodeURIComponent(`${eventId}:${book}:${subtype}:no-such-selection`)}`);
  assert.equal(unknownSelection.reply.status, 404);
  assert.equal(unknownSelection.body.code, 'not_found');
});

test('every book of the selection, each with the history the rings hold; ETag moves only with the selection', async () => {
  const engine = t.app.engine;
  const { ids, books } = widestSelection();
  assert.ok(ids.length >= 2, 'the small board has a selection quoted by several books');
  const target = ids[ids.length - 1]!;
  const slot = engine.slotOf(target);
  // give the selection a history longer than one entry at one book
  for (const price of [150, 165, -120]) {
    t.clock.advance(1000);
    engine.apply([{ op: 'price', slot, priceAmerican: price, suspended: false }]);
  }
  const url = `${PATH}?id=${encodeURIComponent(ids[0]!)}`;
  const first = await t.call(PATH, url);
  assert.equal(first.reply.status, 200);
  assert.deepEqual(first.body.data.map((r: { id: string }) => r.id), ids, 'the rows are every book of the selection, in /odds order');
  assert.deepEqual(first.body.data.map((r: { sportsbook: string }) => r.sportsbook), books);
  for (const row of first.body.data) assert.deepEqual(row.priceHistory, [...engine.history(engine.slotOf(row.id))], row.id);
  const moved = first.body.data.find((r: { id: string }) => r.id === target);
  assert.deepEqual(moved.priceHistory.slice(-3).map((e: { pa: number }) => e.pa), [150, 165, -120]);
  const latest = Math.max(...first.body.data.flatMap((r: { priceHistory: { ls: number }[] }) => r.priceHistory.map((e) => e.ls)));
  assert.equal(first.body.meta.updated, new Date(latest * 1000).toISOString());
  // any book's id names the same selection
  const other = await t.call(PATH, `${PATH}?id=${encodeURIComponent(target)}`);
  assert.deepEqual(other.body.data, first.body.data);

  const etag = first.reply.headers.etag as string;
  assert.match(etag, /^"[^"]+"$/);
  // a change elsewhere on the board leaves this selection's body and tag as they were
  const elsewhere = boardRows(engine, 'all').find((r) => withoutBook(r.id) !== withoutBook(target) && r.priceAmerican !== undefined)!;
  engine.apply([{ op: 'price', slot: engine.slotOf(elsewhere.id), priceAmerican: elsewhere.priceAmerican === 200 ? 210 : 200, suspended: false }]);
  const unchanged = await t.call(PATH, url, { headers: { 'If-None-Match': etag } });
  assert.equal(unchanged.reply.status, 304);
  t.clock.advance(1000);
  engine.apply([{ op: 'price', slot, priceAmerican: 175, suspended: false }]);
  const changed = await t.call(PATH, url, { headers: { 'If-None-Match': etag } });
  assert.equal(changed.reply.status, 200);
  assert.notEqual(changed.reply.headers.etag, etag);
});

test('a removed selection stays with removed: true while its history is kept', async () => {
  const engine = t.app.engine;
  const { ids } = widestSelection();
  const gone = ids[0]!;
  const history = [...engine.history(engine.slotOf(gone))];
  t.clock.advance(1000);
  engine.apply([{ op: 'remove', id: gone }]);
  const { reply, body } = await t.call(PATH, `${PATH}?id=${encodeURIComponent(ids[1]!)}`);
  assert.equal(reply.status, 200);
  const row = body.data.find((r: { id: string }) => r.id === gone);
  assert.equal(row.removed, true);
  assert.deepEqual(row.priceHistory, history);
  assert.ok(body.data.filter((r: { removed?: boolean }) => r.removed === undefined).length >= 1);
});
