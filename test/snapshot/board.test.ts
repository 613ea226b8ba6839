// BoardSnapshot: the gzip body is the snapshot document byte for byte as an
// independent serializer writes it (rows = /odds rows + priceHistory), in both
// variants, on the fixture board and on the engine tests' tricky-id board.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGunzip, gunzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { FORMAT_ALL } from '../../engine/rowJson.ts';
import { HISTORY_CAPACITY } from '../../engine/historyRing.ts';
import { NOW, fixtureEngine, parseBody, rawBody, referenceText, testBoardEngine } from '../helpers/snapshot-helpers.ts';

test('both variants gunzip to the snapshot document a plain serializer writes (fixture board)', () => {
  const { engine } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  for (const withHistory of [false, true]) {
    const body = snapshot.current(withHistory);
    assert.equal(rawBody(body).toString('utf8'), referenceText(engine, withHistory));
    assert.equal(body.rawLength, rawBody(body).length);
    assert.equal(body.byteLength, Buffer.concat(body.chunks as Buffer[]).length);
  }
  snapshot.close();
});

test('the same holds on a board whose ids are prefixes of each other, with small pieces', () => {
  const { engine } = testBoardEngine(11, 24);
  for (const pieceBytes of [512, 8 * 1024, 1 << 20]) {
    const snapshot = new BoardSnapshot(engine, { pieceBytes });
    for (const withHistory of [false, true]) assert.equal(rawBody(snapshot.current(withHistory)).toString('utf8'), referenceText(engine, withHistory));
    snapshot.close();
  }
});

test('structure: top-level keys, event keys, every live row once (futures included), count and syncToken', () => {
  const { engine } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  const body = snapshot.current(false);
  const doc = parseBody(body);
  assert.deepEqual(Object.keys(doc), ['updated', 'syncToken', 'count', 'events']);
  assert.equal(doc.syncToken, String(engine.asOf()));
  assert.equal(body.syncToken, doc.syncToken);
  assert.equal(doc.updated, new Date(engine.asOf()).toISOString());
  let rows = 0;
  let futures = 0;
  const ids = new Set<string>();
  let previous = '';
  for (const event of doc.events) {
    assert.deepEqual(Object.keys(event), ['id', 'league', 'startTime', 'status', 'homeTeamId', 'awayTeamId', 'odds']);
    assert.match(event.startTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$/);
    const order = `${event.startTime}|${event.id}`;
    assert.ok(order > previous, `events ordered by startTime then id: ${previous} then ${order}`);
    previous = order;
    assert.ok(event.odds.length > 0, 'events without live rows are left out');
    let last = '';
    for (const row of event.odds) {
      assert.equal(row.eventId, event.id);
      assert.equal(row.priceHistory, null);
      const key = `${row.sportsbook}\u0000${row.id}`;
      assert.ok(key > last, 'rows in (sportsbook, id) order');
      last = key;
      ids.add(row.id as string);
      if (row.marketScope !== undefined) futures++;
      rows++;
    }
  }
  assert.equal(doc.count, rows);
  assert.equal(body.count, rows);
  assert.equal(rows, engine.liveRows);
  assert.equal(ids.size, rows);
  assert.ok(futures > 0, 'futures rows are on the snapshot');
  snapshot.close();
});

test('rows are the /odds rows (format all) byte for byte, plus priceHistory last', () => {
  const { engine } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  const text = rawBody(snapshot.current(false)).toString('utf8');
  const doc = JSON.parse(text) as ReturnType<typeof parseBody>;
  const one = new Int32Array(1);
  let checked = 0;
  for (const event of doc.events) {
    for (const row of event.odds) {
      one[0] = engine.slotOf(row.id as string);
      const fragment = engine.fragments.join(one, 1, FORMAT_ALL).toString('utf8');
      const { priceHistory, ...rest } = row;
      assert.equal(priceHistory, null);
      assert.equal(JSON.stringify(rest), fragment);
      assert.ok(text.includes(`${fragment.slice(0, -1)},"priceHistory":null}`));
      checked++;
    }
  }
  assert.equal(checked, engine.liveRows);
  snapshot.close();
});

test('history: ring entries oldest first, at most 50, keys present only when they apply', () => {
  const { engine, clock } = fixtureEngine();
  const bookRow = engine.slotOf(parseBody(new BoardSnapshot(engine).current(false)).events[0].odds.find((r) => r.priceAmerican !== undefined)!.id as string);
  const prices: number[] = [];
  for (let i = 0; i < 60; i++) {
    clock.advance(1000);
    const price = i % 2 === 0 ? 120 + i : -130 - i;
    prices.push(price);
    engine.apply([{ op: 'price', slot: bookRow, priceAmerican: price, suspended: i === 59 }]);
  }
  const snapshot = new BoardSnapshot(engine);
  const doc = parseBody(snapshot.current(true));
  let dfsRows = 0;
  for (const event of doc.events) {
    for (const row of event.odds) {
      const history = row.priceHistory as Record<string, unknown>[];
      assert.ok(Array.isArray(history) && history.length <= HISTORY_CAPACITY);
      for (let i = 0; i < history.length; i++) {
        const entry = history[i];
        assert.deepEqual(Object.keys(entry), ['fs', 'ls', 'pa', 'pd', 'dm', 'su'].filter((key) => key in entry));
        assert.ok((entry.fs as number) <= (entry.ls as number));
        if (i > 0) assert.ok((history[i - 1].fs as number) <= (entry.fs as number), 'oldest first');
        assert.equal('pa' in entry, 'pd' in entry);
        if (entry.su !== undefined) assert.equal(entry.su, true);
      }
      if (row.dfsMultiplier !== undefined) {
        dfsRows++;
        for (const entry of history) assert.ok(!('pa' in entry) && 'dm' in entry);
      }
      if (row.id === engine.idOf(bookRow)) {
        assert.equal(history.length, HISTORY_CAPACITY);
        assert.deepEqual(history.map((e) => e.pa), prices.slice(-HISTORY_CAPACITY));
        const newest = history[HISTORY_CAPACITY - 1];
        assert.equal(newest.ls, Math.floor(clock.now() / 1000));
        assert.equal(newest.su, true);
        assert.equal(row.priceAmerican, prices[59]);
      }
    }
  }
  assert.ok(dfsRows > 0, 'DFS rows carry dm history');
  snapshot.close();
});

test('the chunks stream through zlib in pieces (one member, any chunking)', async () => {
  const { engine } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 16 * 1024 });
  const body = snapshot.current(true);
  const all = Buffer.concat(body.chunks as Buffer[]);
  const parts: Buffer[] = [];
  for (let at = 0; at < all.length; at += 1000) parts.push(all.subarray(at, at + 1000));
  const out: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Readable.from(parts).pipe(createGunzip()).on('data', (chunk: Buffer) => out.push(chunk)).on('end', resolve).on('error', reject);
  });
  assert.ok(Buffer.concat(out).equals(gunzipSync(all)));
  assert.equal(all[0], 0x1f);
  assert.equal(all[1], 0x8b);
  snapshot.close();
});

test('an unchanged board returns the same body object without rendering anything', () => {
  const { engine } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  const first = snapshot.current(false);
  const rendered = snapshot.stats()[0].rendered.piecesRendered;
  for (let i = 0; i < 5; i++) assert.equal(snapshot.current(false), first);
  assert.equal(snapshot.stats()[0].rendered.piecesRendered, rendered);
  assert.equal(first.etag, snapshot.etag(false));
  snapshot.close();
});

test('startTime is minute precision with Z, events keep their teams (null on futures anchors)', () => {
  const { engine } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  const doc = parseBody(snapshot.current(false));
  const futures = doc.events.filter((e) => engine.event(e.id)!.isFutures);
  assert.ok(futures.length > 0);
  for (const event of futures) assert.deepEqual([event.homeTeamId, event.awayTeamId], [null, null]);
  for (const event of doc.events.filter((e) => !engine.event(e.id)!.isFutures)) assert.ok(event.homeTeamId !== null && event.awayTeamId !== null);
  const info = engine.event(doc.events[0].id)!;
  assert.equal(doc.events[0].startTime, `${new Date(info.startTime).toISOString().slice(0, 16)}Z`);
  assert.ok(NOW > 0);
  snapshot.close();
});
