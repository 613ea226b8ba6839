// A msgpack body of price ticks goes from its bytes to the log and the columns as typed
// arrays (ingest/tickBatch.ts). Two boards from the same fixture take the same batches,
// one as msgpack bodies (that path where it applies) and one as decoded objects (the
// general path): every answer, every refusal with its errors, the log's bytes and the
// board's columns and history must be the same; bodies the byte reader does not take
// (a float price, priceDecimal, a repeated key, trailing bytes...) still get the
// general path's answer.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pack, unpack } from 'msgpackr';
import { ManualClock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import { oddsId, type OddsInput } from '../../engine/model.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { IngestError, type IngestResult } from '../../ingest/ingest.ts';
import { SpareBuffers } from '../../ingest/spareBuffers.ts';
import { readTickBatch } from '../../ingest/tickBatch.ts';
import { walDir } from '../../persistence/log/fileBatchLog.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { openBoard, tempDataDir, type OpenedBoard } from './ingest-helpers.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Outcome = { ok: { seq: number; applied: number; index: number } } | { refused: { code: string; detail: string; errors: unknown[] } };

async function outcome(result: Promise<IngestResult>): Promise<Outcome> {
  try {
    const { seq, applied, index } = await result;
    return { ok: { seq, applied, index } };
  } catch (error) {
    if (!(error instanceof IngestError)) throw error;
    return { refused: { code: error.code, detail: error.message, errors: error.errors } };
  }
}

function walBytes(dir: string): Buffer {
  const wal = walDir(dir);
  return Buffer.concat(readdirSync(wal).sort().map((name) => readFileSync(join(wal, name))));
}

function rowsOf(engine: OddsEngine, sportsbookKind: 'dfs' | 'book', count: number): string[] {
  const s = engine.store;
  const ids: string[] = [];
  for (let slot = 0; slot < s.size && ids.length < count; slot++) {
    if (!s.isLive(slot)) continue;
    const dfs = s.priceAmerican[slot] === NO_PRICE;
    if (dfs === (sportsbookKind === 'dfs')) ids.push(engine.idOf(slot));
  }
  assert.equal(ids.length, count, `the small board has ${count} ${sportsbookKind} rows`);
  return ids;
}

/** A msgpack fixmap written by hand (msgpackr never writes a key twice). */
function rawMap(entries: [string, Buffer][]): Buffer {
  return Buffer.concat([Buffer.from([0x80 | entries.length]), ...entries.flatMap(([key, value]) => [pack(key), value])]);
}

test('ticks read from msgpack bytes give the answers, log bytes and board of the general path', async () => {
  const fast = tempDataDir('ingest-tick-batch-fast-');
  const general = tempDataDir('ingest-tick-batch-general-');
  dirs.push(fast, general);
  const fastClock = new ManualClock(NOW);
  const generalClock = new ManualClock(NOW);
  const a: OpenedBoard = await openBoard(fast, fastClock, testBoard('small'));
  const b: OpenedBoard = await openBoard(general, generalClock, testBoard('small'));
  try {
    const engine = a.durable.engine;
    const [b1, b2, b3, b4, b5] = rowsOf(engine, 'book', 5);
    const [d1, d2] = rowsOf(engine, 'dfs', 2);
    const removedLater = b5;

    // each: the body the fast board gets, and the changes the general board gets (what msgpackr reads from the body)
    const bodies: { name: string; body: Buffer; fromBytes: boolean }[] = [];
    const add = (name: string, body: Buffer, fromBytes: boolean) => bodies.push({ name, body, fromBytes });
    const ticks = (changes: unknown[]) => pack(changes);
    add('prices', ticks([b1, b2, b3, b4].map((id, i) => ({ op: 'price', id, priceAmerican: i % 2 === 0 ? -115 - i : 120 + i }))), true);
    add('prices and suspended flags', ticks([
      { op: 'price', id: b1, priceAmerican: 135, suspended: true },
      { suspended: false, priceAmerican: -(2 ** 29), id: b2, op: 'price' },
      { op: 'price', id: b3, priceAmerican: 2 ** 30 - 1, suspended: false },
    ]), true);
    add('suspended only', ticks([{ op: 'price', id: b1, suspended: false }, { op: 'price', id: b4, suspended: true }]), true);
    add('DFS multipliers', ticks([{ op: 'price', id: d1, dfsMultiplier: 1.85 }, { op: 'price', id: d2, dfsMultiplier: 2, suspended: true }, { op: 'price', id: d1, dfsMultiplier: 0.5 }]), true);
    add('the same row twice', ticks([{ op: 'price', id: b2, priceAmerican: -140 }, { op: 'price', id: b2, priceAmerican: -145 }]), true);
    add('an unknown id among good ticks', ticks([{ op: 'price', id: b1, priceAmerican: -150 }, { op: 'price', id: 'nope:x:y:z', priceAmerican: -110 }, { op: 'price', id: b2, priceAmerican: 99 }]), false);
    add('a price inside (-100, 100)', ticks([{ op: 'price', id: b1, priceAmerican: -99 }]), false);
    add('a price too large', ticks([{ op: 'price', id: b1, priceAmerican: 2 ** 30 }]), false);
    add('a DFS multiplier on a sportsbook row', ticks([{ op: 'price', id: b1, dfsMultiplier: 1.5 }]), false);
    add('priceAmerican on a DFS row', ticks([{ op: 'price', id: d1, priceAmerican: -110 }]), false);
    add('a DFS multiplier out of range', ticks([{ op: 'price', id: d1, dfsMultiplier: 2.5 }]), false);
    add('neither price nor suspended', ticks([{ op: 'price', id: b1 }]), false);
    add('priceDecimal', ticks([{ op: 'price', id: b1, priceDecimal: 1.9 }]), false);
    add('a fractional price', ticks([{ op: 'price', id: b1, priceAmerican: -110.5 }]), false);
    add('a null price', ticks([{ op: 'price', id: b1, priceAmerican: null, suspended: true }]), false);
    add('an unknown key', ticks([{ op: 'price', id: b1, priceAmerican: -120, note: 'x' }]), false);
    add('an id of three parts', ticks([{ op: 'price', id: 'a:b:c', priceAmerican: -120 }]), false);
    add('an id with an empty part', ticks([{ op: 'price', id: 'a::c:d', priceAmerican: -120 }]), false);
    add('a repeated key (the last one counts)', Buffer.concat([Buffer.from([0x91]), rawMap([['op', pack('price')], ['id', pack(b3)], ['priceAmerican', pack(-300)], ['priceAmerican', pack(-125)]])]), false);
    add('an empty batch', ticks([]), false);
    add('a tick and a remove', ticks([{ op: 'price', id: b4, priceAmerican: -160 }, { op: 'remove', id: removedLater }]), false);
    add('a tick on the removed row', ticks([{ op: 'price', id: removedLater, priceAmerican: -120 }]), false);
    add('prices after the remove', ticks([b1, b2, b3].map((id) => ({ op: 'price', id, priceAmerican: -170 }))), true);

    for (const { name, body, fromBytes } of bodies) {
      assert.equal(readTickBatch(body, new SpareBuffers()) !== null && fromBytes, fromBytes, `${name}: the byte reader takes it`);
      const before = a.durable.ingest.ticksReadFromBytes;
      const fastAnswer = await outcome(a.durable.ingest.submitBody(body, 'msgpack'));
      const generalAnswer = await outcome(b.durable.ingest.submit(unpack(body) as unknown[]));
      assert.deepEqual(fastAnswer, generalAnswer, name);
      assert.equal(a.durable.ingest.ticksReadFromBytes - before, fromBytes ? 1 : 0, `${name}: went through the typed arrays`);
      fastClock.advance(1500);
      generalClock.advance(1500);
    }
    const refused = await outcome(a.durable.ingest.submitBody(Buffer.concat([ticks([{ op: 'price', id: b1, priceAmerican: -110 }]), Buffer.from([0xc0])]), 'msgpack'));
    assert.ok('refused' in refused && refused.refused.code === 'invalid_batch', 'trailing bytes after the array are refused');

    assert.ok(walBytes(fast).equals(walBytes(general)), 'the two logs hold the same bytes');
    const s = engine.store;
    const t = b.durable.engine.store;
    assert.equal(engine.seq, b.durable.engine.seq);
    for (const column of ['state', 'priceAmerican', 'dfsMultiplier', 'suspended', 'seq', 'updated'] as const) {
      assert.deepEqual(s[column].subarray(0, s.size), t[column].subarray(0, t.size), column);
    }
    for (const id of [b1, b2, b3, b4, d1, d2]) assert.deepEqual(engine.history(engine.slotOf(id)), b.durable.engine.history(b.durable.engine.slotOf(id)), `history of ${id}`);
    assert.deepEqual([...a.durable.ingest.appliedByKind], [...b.durable.ingest.appliedByKind]);
  } finally {
    await a.close();
    await b.close();
  }
});

test('a batch of ticks that another writer overtakes between its validation and its apply finds its rows again, as the general path does', async () => {
  const fast = tempDataDir('ingest-tick-batch-epoch-fast-');
  const general = tempDataDir('ingest-tick-batch-epoch-general-');
  dirs.push(fast, general);
  const a: OpenedBoard = await openBoard(fast, new ManualClock(NOW), testBoard('small'));
  const b: OpenedBoard = await openBoard(general, new ManualClock(NOW), testBoard('small'));
  try {
    const [b1, b2, b3] = rowsOf(a.durable.engine, 'book', 3);
    const changes = [b1, b2, b3].map((id) => ({ op: 'price', id, priceAmerican: -133 }));
    const body = pack(changes);
    const answers: Outcome[] = [];
    const slot2 = a.durable.engine.slotOf(b2);
    const fresh: OddsInput = { ...a.durable.engine.store.rowInput(slot2), selectionId: `${a.durable.engine.store.rowInput(slot2).selectionId}-alt`, priceAmerican: 170, updated: 0 };
    for (const [board, submit] of [[a, () => a.durable.ingest.submitBody(body, 'msgpack')], [b, () => b.durable.ingest.submit(changes)]] as const) {
      const pending = outcome(submit());
      // validated and waiting for its fsync: a writer outside the write path removes a
      // row it ticks and, past the tombstone retention, a new row takes that slot
      board.durable.engine.apply([{ op: 'remove', id: b2 }], NOW);
      board.durable.engine.apply([{ op: 'upsert', row: fresh }], NOW + 11 * 60_000);
      assert.equal(board.durable.engine.slotOf(oddsId(fresh)), slot2, 'the new row took the removed row\'s slot (what this test is about)');
      answers.push(await pending);
    }
    assert.equal(a.durable.ingest.ticksReadFromBytes, 1);
    assert.deepEqual(answers[0], answers[1]);
    const s = a.durable.engine.store;
    const t = b.durable.engine.store;
    for (const column of ['state', 'priceAmerican', 'seq', 'updated'] as const) assert.deepEqual(s[column].subarray(0, s.size), t[column].subarray(0, t.size), column);
    assert.equal(s.priceAmerican[a.durable.engine.slotOf(b1)], -133);
    assert.equal(s.priceAmerican[slot2], 170, 'the row now in the removed row\'s slot took no tick');
  } finally {
    await a.close();
    await b.close();
  }
});

test('many batches of ticks in flight at once (their memory reused as they finish) log the same bytes as the general path', async () => {
  const fast = tempDataDir('ingest-tick-batch-flight-fast-');
  const general = tempDataDir('ingest-tick-batch-flight-general-');
  dirs.push(fast, general);
  const a: OpenedBoard = await openBoard(fast, new ManualClock(NOW), testBoard('small'));
  const b: OpenedBoard = await openBoard(general, new ManualClock(NOW), testBoard('small'));
  try {
    const ids = rowsOf(a.durable.engine, 'book', 60);
    const batches = Array.from({ length: 48 }, (_, k) => ids.map((id, i) => ({ op: 'price', id, priceAmerican: -101 - ((k * 13 + i) % 400), ...(i % 7 === k % 7 ? { suspended: k % 2 === 0 } : {}) })));
    const fastAnswers: Promise<Outcome>[] = [];
    const generalAnswers: Promise<Outcome>[] = [];
    for (let round = 0; round < batches.length; round += 12) {
      // twelve at a time: each group shares fsyncs while later ones are read and checked
      const group = batches.slice(round, round + 12);
      const fastGroup = group.map((changes) => outcome(a.durable.ingest.submitBody(pack(changes), 'msgpack')));
      const generalGroup = group.map((changes) => outcome(b.durable.ingest.submit(changes)));
      fastAnswers.push(...fastGroup);
      generalAnswers.push(...generalGroup);
      await Promise.all([...fastGroup, ...generalGroup]);
    }
    assert.deepEqual(await Promise.all(fastAnswers), await Promise.all(generalAnswers));
    assert.equal(a.durable.ingest.ticksReadFromBytes, batches.length);
    assert.ok(walBytes(fast).equals(walBytes(general)), 'the two logs hold the same bytes');
    const s = a.durable.engine.store;
    const t = b.durable.engine.store;
    for (const column of ['priceAmerican', 'suspended', 'seq', 'updated'] as const) assert.deepEqual(s[column].subarray(0, s.size), t[column].subarray(0, t.size), column);
  } finally {
    await a.close();
    await b.close();
  }
});
