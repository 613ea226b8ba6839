// The replay window (docs/archive.md): /odds/updated?since=T, for a T older than the
// board's tombstones (10 minutes) but inside REPLAY_WINDOW_HOURS, answers what a replay
// of the acknowledged batches from T gives: every row whose last change is at or after
// T, in its current state, the rows removed since (tombstones) included. A real durable
// app with a tick archive on a manual clock; random batches (prices, removals, revivals)
// over a time span several times the tombstone retention, the archive flushed after
// each; the answer, walked in small pages, against a brute-force replay of the batches.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { americanToDecimal, type OddsInput } from '../../engine/model.ts';
import { ROW_FIELDS } from '../../engine/rowFields.ts';
import { compareStrings } from '../../engine/rowOrder.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ROWS = 12;
const MINUTE = 60_000;

let t: TestApp;
let archiveDir: string;
let ids: string[] = [];
/** The brute-force replay: each followed row's state after every acknowledged batch. */
const model = new Map<string, { row: Record<string, unknown>; input: OddsInput; removed: boolean; updated: number }>();

before(async () => {
  archiveDir = mkdtempSync(join(tmpdir(), 'odds-replay-'));
  t = await startTestApp({ dataDir: true, env: { ARCHIVE_DIR: archiveDir, ARCHIVE_INTERVAL_MS: '3600000' } });
  const engine = t.app.engine;
  const s = engine.store;
  for (let slot = 0; slot < s.size && ids.length < ROWS; slot++) {
    if (!s.isLive(slot) || !Number.isNaN(s.dfsMultiplier[slot]) || s.priceAmerican[slot] === 0) continue;
    const id = engine.idOf(slot);
    if (ids.some((other) => other.split(':')[0] === id.split(':')[0] && ids.length % 3 !== 0)) continue;
    ids.push(id);
    model.set(id, { row: engine.rowObject(slot, 'all'), input: s.rowInput(slot), removed: false, updated: s.updated[slot] });
  }
  assert.equal(ids.length, ROWS);
  ids = ids.sort();
});

after(async () => {
  await t?.close();
  rmSync(archiveDir, { recursive: true, force: true });
});

type Op = { kind: 'price'; row: number; price: number } | { kind: 'remove'; row: number } | { kind: 'revive'; row: number; price: number };

const price = fc.integer({ min: 100, max: 400 }).chain((p) => fc.constantFrom(p, -p));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('price' as const), row: fc.nat(ROWS - 1), price }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), row: fc.nat(ROWS - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('revive' as const), row: fc.nat(ROWS - 1), price }) },
);
/** A batch: its gap after the previous one (up to 6 minutes, so 12 batches span well past the 10-minute tombstones) and its ops. */
const batch = fc.record({ gapMs: fc.integer({ min: 1, max: 6 * MINUTE }), ops: fc.array(op, { minLength: 1, maxLength: 4 }) });

/** The changes of a batch against the model's current state (an op that does not apply, such as a price on a removed row, is left out). */
function changesOf(ops: Op[]): { changes: unknown[]; effects: (() => void)[] } {
  const changes: unknown[] = [];
  const effects: (() => void)[] = [];
  const touched = new Set<string>();
  for (const o of ops) {
    const id = ids[o.row]!;
    const state = model.get(id)!;
    const isRemoved = state.removed;
    // one change per row per batch: the model applies a batch's effects after it
    if (touched.has(id)) continue;
    touched.add(id);
    if (o.kind === 'price' && !isRemoved) {
      changes.push({ op: 'price', id, priceAmerican: o.price });
      effects.push(() => {
        state.row.priceAmerican = o.price;
        state.row.priceDecimal = americanToDecimal(o.price);
      });
    } else if (o.kind === 'remove' && !isRemoved) {
      changes.push({ op: 'remove', id });
      effects.push(() => {
        state.removed = true;
      });
    } else if (o.kind === 'revive' && isRemoved) {
      const row: Record<string, unknown> = { id };
      for (const field of ROW_FIELDS) if (field.ingest !== null && field.name !== 'id') row[field.name] = (state.input as unknown as Record<string, unknown>)[field.name];
      row.priceAmerican = o.price;
      changes.push({ op: 'odds', row });
      effects.push(() => {
        state.removed = false;
        state.row.priceAmerican = o.price;
        state.row.priceDecimal = americanToDecimal(o.price);
      });
    }
  }
  return { changes, effects };
}

/** What a replay of the batches says /odds/updated?since= returns, in the one odds order. */
function expected(since: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [, state] of model) {
    if (state.updated < since) continue;
    const row: Record<string, unknown> = { ...state.row, updated: new Date(state.updated).toISOString() };
    delete row.removed;
    if (state.removed) row.removed = true;
    out.push(row);
  }
  return out.sort((a, b) => compareStrings(a.sportsbook as string, b.sportsbook as string) || compareStrings(a.id as string, b.id as string));
}

/** The whole walk of /odds/updated?since= in pages of `limit`, only the followed rows (the rest of the board was loaded before every since). */
async function walk(since: number, limit: number): Promise<{ rows: Record<string, unknown>[]; notes: string[] }> {
  const rows: Record<string, unknown>[] = [];
  const notes: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const path = `/api/v1/odds/updated?since=${since}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
    const { reply, body } = await t.call('/api/v1/odds/updated', path);
    assert.equal(reply.status, 200, JSON.stringify(body));
    if (body.meta?.note) notes.push(body.meta.note);
    rows.push(...body.data);
    cursor = body.nextCursor;
    if (cursor === null) return { rows, notes };
  }
  throw new Error('the walk did not end');
}

let pastHorizon = 0;

test('/odds/updated?since= up to 24 h back through the archive equals a replay of the log', async () => {
  const engine = t.app.engine;
  const archive = t.app.durable!.archive!;
  await fc.assert(
    fc.asyncProperty(fc.array(batch, { minLength: 6, maxLength: 12 }), fc.nat(1000), fc.integer({ min: 1, max: 7 }), async (batches, pick, limit) => {
      // each case on its own stretch of the clock, an hour after the last
      t.clock.set(t.clock.now() + 60 * MINUTE);
      const times: number[] = [];
      for (const b of batches) {
        t.clock.advance(b.gapMs);
        const { changes, effects } = changesOf(b.ops);
        if (changes.length === 0) continue;
        const at = t.clock.now();
        await t.app.durable!.durable.ingest.submit(changes);
        for (const effect of effects) effect();
        for (const change of changes as { id?: string; row?: { id: string } }[]) model.get(change.id ?? change.row!.id)!.updated = at;
        times.push(at);
        // archived as ARCHIVE_INTERVAL_MS would, well inside the tombstones' 10 minutes
        await archive.flush();
      }
      if (times.length === 0) return;
      // one more batch 11 minutes on: the board recycles the tombstones of the stretch
      t.clock.advance(11 * MINUTE);
      const first = ids.find((id) => !model.get(id)!.removed);
      if (first !== undefined) {
        await t.app.durable!.durable.ingest.submit([{ op: 'price', id: first, priceAmerican: -150 }]);
        const state = model.get(first)!;
        state.row.priceAmerican = -150;
        state.row.priceDecimal = americanToDecimal(-150);
        state.updated = t.clock.now();
        await archive.flush();
      }
      // since: a batch's time, or just after it
      const since = times[pick % times.length]! + (pick % 2);
      if (since < engine.deltaHorizon()) pastHorizon++;
      const got = await walk(since, limit);
      assert.deepEqual(got.notes, [], 'no re-bootstrap note inside the window');
      assert.deepEqual(got.rows.map((row) => row.id), expected(since).map((row) => row.id));
      assert.deepEqual(got.rows, expected(since));
    }),
    { numRuns: 10, seed: Number(process.env.FC_SEED ?? 1127), endOnFailure: true },
  );
  assert.ok(pastHorizon >= 5, `${pastHorizon} of 10 cases asked past the board's tombstone horizon`);
});

test("an event's final status removes its rows: past the tombstones, they come back from the archive as tombstones", async () => {
  const engine = t.app.engine;
  const archive = t.app.durable!.archive!;
  const followed = new Set(ids.map((id) => id.split(':')[0]));
  // an event none of the followed rows belongs to, with rows on the board
  const s = engine.store;
  let eventId: string | undefined;
  for (let slot = 0; slot < s.size && eventId === undefined; slot++) {
    if (!s.isLive(slot)) continue;
    const ev = engine.idOf(slot).split(':')[0]!;
    if (!followed.has(ev) && !engine.event(ev)!.isFutures && engine.event(ev)!.status === 'scheduled') eventId = ev;
  }
  assert.ok(eventId !== undefined);
  const before = (await t.call('/api/v1/events/:eventId/odds', `/api/v1/events/${eventId}/odds`)).body.data as Record<string, unknown>[];
  assert.ok(before.length > 0);
  t.clock.advance(MINUTE);
  const since = t.clock.now();
  await t.app.durable!.durable.ingest.submit([
    { op: 'status', eventId, status: 'in_progress' },
    { op: 'status', eventId, status: 'final' },
  ]);
  const endedAt = t.clock.now();
  await archive.flush();
  t.clock.advance(11 * MINUTE);
  const other = ids.find((id) => !model.get(id)!.removed)!;
  await t.app.durable!.durable.ingest.submit([{ op: 'price', id: other, priceAmerican: 222 }]);
  const state = model.get(other)!;
  state.row.priceAmerican = 222;
  state.row.priceDecimal = americanToDecimal(222);
  state.updated = t.clock.now();
  await archive.flush();
  assert.ok(since < engine.deltaHorizon(), "the event's tombstones were recycled");
  assert.equal(engine.slotOf(before[0]!.id as string), -1);
  const got = await walk(since, 4);
  assert.deepEqual(got.notes, []);
  const expectedRows = [
    ...before.map((row): Record<string, unknown> => ({ ...row, updated: new Date(endedAt).toISOString(), removed: true })),
    ...expected(since),
  ].sort((a, b) => compareStrings(a.sportsbook as string, b.sportsbook as string) || compareStrings(a.id as string, b.id as string));
  assert.deepEqual(got.rows, expectedRows);
});

test('past REPLAY_WINDOW_HOURS (24) the same since gets the re-bootstrap note again', async () => {
  const engine = t.app.engine;
  const archive = t.app.durable!.archive!;
  const since = t.clock.now() + 1;
  t.clock.advance(2);
  const gone = ids.find((id) => !model.get(id)!.removed)!;
  await t.app.durable!.durable.ingest.submit([{ op: 'remove', id: gone }]);
  await archive.flush();
  const other = ids.find((id) => !model.get(id)!.removed && id !== gone)!;
  t.clock.advance(11 * MINUTE);
  await t.app.durable!.durable.ingest.submit([{ op: 'price', id: other, priceAmerican: 333 }]);
  await archive.flush();
  assert.ok(since < engine.deltaHorizon(), 'the removal was recycled');
  const inside = await t.call('/api/v1/odds/updated', `/api/v1/odds/updated?since=${since}&limit=50`);
  assert.equal(inside.body.meta.note, undefined);
  assert.deepEqual(inside.body.data.map((row: { id: string; removed?: boolean }) => [row.id, row.removed === true]).sort(), [[gone, true], [other, false]].sort());
  t.clock.advance(24 * 60 * MINUTE);
  await t.app.durable!.durable.ingest.submit([{ op: 'price', id: other, priceAmerican: 334 }]);
  const outside = await t.call('/api/v1/odds/updated', `/api/v1/odds/updated?since=${since}&limit=50`);
  assert.equal(outside.reply.status, 200);
  assert.match(outside.body.meta.note ?? '', /re-bootstrap/);
});
