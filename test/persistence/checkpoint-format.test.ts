// Checkpoint bodies of format 2 (engine/checkpointBlocks.ts: a msgpack manifest, then the
// state's typed arrays as raw blocks, read straight into the board's arrays) beside
// format 1 (one msgpack document, what earlier builds wrote): a format 1 checkpoint still
// restores, exactly the board its format 2 twin restores; the body a worker thread builds
// from the checkpoint's copy is byte for byte the one built on the event loop; a damaged
// byte anywhere in a format 2 body (its prefix, manifest, blocks or padding) refuses the
// start naming the file, the body's offset and what repair says; a body whose CRC holds
// but whose layout does not add up is refused as not decoding. The derived state a
// checkpoint keeps (id table, posting lists, live counts) restores the same board as the
// one rebuilt from the rows, and one that does not fit the rows is rebuilt instead.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { ManualClock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import type { OddsInput } from '../../engine/model.ts';
import { CHECKPOINT_PACK_OPTIONS, EngineStateCopy, decodeEngineState, encodeEngineState, engineState, packStateHere } from '../../engine/checkpoint.ts';
import { BLOCK_BODY_MAGIC, blockBody, planBlocks } from '../../engine/checkpointBlocks.ts';
import { RestoreRefusedError } from '../../ingest/durableBoard.ts';
import { checkpointLayout, listCheckpoints, readCheckpointFile, writeCheckpoint } from '../../persistence/log/checkpointFiles.ts';
import { packInWorker } from '../../persistence/log/packInWorker.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { pricesAre, submitBatches } from '../ingest/crashRows.ts';
import { openBoard, tempDataDir, type OpenedBoard } from '../ingest/ingest-helpers.ts';

// generated here rather than through helpers/app.ts: no server starts, so test/run.ts runs this file once, not once per transport
const board = generateBoard({ size: 'small', seed: 42, now: NOW });
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = tempDataDir('checkpoint-format-');
  dirs.push(dir);
  return dir;
}

const packr = new Packr(CHECKPOINT_PACK_OPTIONS);

/**
 * Asserts that two engines hold the same board: the same saved state but for the derived
 * part (bytes), the same posting lists (slots; versions too when `versions`: a restore
 * sets every list's version to its seq, a live board's move with its rows) and an id
 * table that finds every row (where an id sits in the table depends on the order rows
 * came in).
 */
function sameBoard(a: OddsEngine, b: OddsEngine, versions: boolean): void {
  const { derived: _a, ...baseA } = engineState(a);
  const { derived: _b, ...baseB } = engineState(b);
  assert.ok(Buffer.from(packr.pack(baseA)).equals(Buffer.from(packr.pack(baseB))), 'the same state');
  const familiesA = a.indexes.families();
  const familiesB = b.indexes.families();
  familiesA.forEach((family, f) => {
    const other = familiesB[f]!;
    for (let i = 0; i < Math.max(family.length, other.length); i++) {
      const x = family[i];
      const y = other[i];
      const itemsX = x === undefined ? [] : [...x.items.subarray(0, x.length)];
      const itemsY = y === undefined ? [] : [...y.items.subarray(0, y.length)];
      assert.deepEqual(itemsX, itemsY, `family ${f} list ${i}`);
      if (versions && itemsX.length > 0) assert.equal(x!.version, y!.version, `family ${f} list ${i} version`);
    }
  });
  assert.equal(a.keys.size, b.keys.size);
  for (let slot = 0; slot < a.store.size; slot++) if (a.store.state[slot] !== 0) assert.equal(b.slotOf(a.idOf(slot)), slot);
}

test('a start writes body format 2; the same checkpoint as format 1 (what earlier builds wrote) still restores, exactly the same board', async () => {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board);
  await submitBatches(opened, clock, 1, 3);
  await opened.durable.checkpointNow();
  await submitBatches(opened, clock, 4, 5);
  await opened.close();
  const live = opened.durable.engine;

  const newest = listCheckpoints(dir)[0]!;
  assert.equal(newest.logIndex, 3);
  const contents = readCheckpointFile(newest);
  assert.ok(BLOCK_BODY_MAGIC.equals(contents.body.subarray(0, 8)), 'the body is format 2');

  const fromFormat2 = await openBoard(dir, new ManualClock(NOW), board);
  assert.equal(fromFormat2.durable.restore.checkpoint?.logIndex, 3);
  assert.equal(fromFormat2.durable.engine.derivedFrom, 'saved');
  assert.equal(fromFormat2.durable.restore.replayedRecords, 2);
  pricesAre(fromFormat2, 5);
  sameBoard(live, fromFormat2.durable.engine, false);
  await fromFormat2.close();

  // the same state as one msgpack document without the derived state, as earlier builds wrote it, in place of the format 2 file
  const { derived: _derived, ...older } = engineState(decodeEngineState(contents.body, new ManualClock(NOW)));
  const format1 = packr.pack(older);
  writeCheckpoint(dir, newest.logIndex, format1, { meta: contents.meta, keep: 2 });
  const rewritten = readCheckpointFile(newest);
  assert.ok(!BLOCK_BODY_MAGIC.equals(rewritten.body.subarray(0, 8)), 'the body is now one msgpack document (format 1)');
  assert.deepEqual(rewritten.meta, contents.meta);

  const fromFormat1 = await openBoard(dir, new ManualClock(NOW), board);
  assert.equal(fromFormat1.durable.restore.checkpoint?.logIndex, 3, 'restored from the format 1 checkpoint, not passed over');
  assert.equal(fromFormat1.durable.engine.derivedFrom, 'rebuilt');
  assert.deepEqual(fromFormat1.durable.restore.skippedCheckpoints, []);
  pricesAre(fromFormat1, 5);
  // the saved derived state (format 2) and the one rebuilt from the rows (format 1) alike
  sameBoard(fromFormat2.durable.engine, fromFormat1.durable.engine, true);
  await fromFormat1.close();
});

test("the body a worker thread builds from a checkpoint's copy is byte for byte the one built on the event loop", async () => {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board);
  await submitBatches(opened, clock, 1, 2);
  const engine = opened.durable.engine;
  const here = packStateHere(engineState(engine));
  const expected = Buffer.concat(here.parts, here.length);
  // the copy the durable board takes for a checkpoint, its arrays moved to the worker and back
  const copy = new EngineStateCopy(engine);
  while (!copy.copyStep(64 * 1024));
  const plan = planBlocks(copy.state);
  const packed = await packInWorker(plan.manifest, plan.blocks, copy.buffers(), CHECKPOINT_PACK_OPTIONS);
  assert.equal(packed.blocks.length, plan.blocks.length);
  const built = blockBody(packed.body, packed.crc, packed.blocks, packed.blocksCrc);
  assert.equal(built.length, here.length);
  assert.equal(built.crc, here.crc);
  assert.ok(Buffer.concat(built.parts, built.length).equals(expected));
  // and it decodes to the board
  assert.ok(encodeEngineState(decodeEngineState(expected, new ManualClock(NOW))).equals(expected));
  await opened.close();
});

/** A data dir whose only checkpoint is format 2, with the log after it; its body's layout. */
async function onlyCheckpoint(): Promise<{ dir: string; path: string; bodyStart: number; bodyEnd: number; manifestEnd: number }> {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board);
  await submitBatches(opened, clock, 1, 3);
  await opened.close();
  const only = listCheckpoints(dir);
  assert.equal(only.length, 1);
  const bytes = readFileSync(only[0]!.path);
  const layout = checkpointLayout(bytes);
  assert.ok(BLOCK_BODY_MAGIC.equals(bytes.subarray(layout.bodyStart, layout.bodyStart + 8)));
  const manifestEnd = layout.bodyStart + 16 + bytes.readUInt32LE(layout.bodyStart + 8);
  return { dir, path: only[0]!.path, bodyStart: layout.bodyStart, bodyEnd: layout.bodyEnd, manifestEnd };
}

function flip(path: string, offset: number): void {
  const bytes = readFileSync(path);
  bytes[offset] ^= 0x20;
  writeFileSync(path, bytes);
}

async function refusedAsDamaged(dir: string, path: string, bodyStart: number, what: string): Promise<void> {
  await assert.rejects(openBoard(dir, new ManualClock(NOW), board), (error: unknown) => {
    assert.ok(error instanceof RestoreRefusedError, `${what}: ${String(error)}`);
    assert.ok(error.message.includes(`${path} at offset ${bodyStart} (body)`), `${what}: ${error.message}`);
    assert.match(error.message, /fails its CRC/, what);
    assert.match(error.message, /npm run repair/, what);
    return true;
  });
}

test('a damaged byte anywhere in a format 2 body refuses the start, naming the file, the offset and what repair says', async () => {
  const { dir, path, bodyStart, bodyEnd, manifestEnd } = await onlyCheckpoint();
  const named: [string, number][] = [
    ['the magic', bodyStart + 3],
    ["the manifest's length", bodyStart + 10],
    ["the manifest's CRC", bodyStart + 13],
    ['the manifest', bodyStart + 16 + 7],
    ['the first block', manifestEnd + 8],
    ['a block in the middle', (manifestEnd + bodyEnd) >>> 1],
    ['the last byte', bodyEnd - 1],
  ];
  for (const [what, offset] of named) {
    flip(path, offset);
    await refusedAsDamaged(dir, path, bodyStart, what);
    flip(path, offset); // the same byte back: the next case starts from the intact file
  }
  // and any byte of the body, drawn (seeded)
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: bodyStart, max: bodyEnd - 1 }), async (offset) => {
      flip(path, offset);
      try {
        await refusedAsDamaged(dir, path, bodyStart, `byte ${offset}`);
      } finally {
        flip(path, offset);
      }
    }),
    { numRuns: 12, seed: 20261128 },
  );
  // the intact file restores
  const opened = await openBoard(dir, new ManualClock(NOW), board);
  pricesAre(opened, 3);
  await opened.close();
});

test('a format 2 body whose CRC holds but whose blocks do not fill it exactly is refused as not decoding', async () => {
  const { dir, path } = await onlyCheckpoint();
  const file = listCheckpoints(dir)[0]!;
  const contents = readCheckpointFile(file);
  // eight more bytes after the last block, under a CRC that covers them
  writeCheckpoint(dir, file.logIndex, Buffer.concat([contents.body, Buffer.alloc(8)]), { meta: contents.meta });
  await assert.rejects(openBoard(dir, new ManualClock(NOW), board), (error: unknown) => {
    assert.ok(error instanceof RestoreRefusedError, String(error));
    assert.ok(error.message.includes(`${path} at offset 0 (body): passes its checks but does not decode`), error.message);
    assert.match(error.message, /blocks end at byte/);
    return true;
  });
});

test('saved derived state that does not fit the rows is not taken: the restore rebuilds it, and the board is the same', async () => {
  const dir = dataDir();
  {
    const clock = new ManualClock(NOW);
    const opened = await openBoard(dir, clock, board);
    await submitBatches(opened, clock, 1, 2);
    const engine = opened.durable.engine;
    const good = engineState(engine);
    const restored = decodeEngineState(encodeEngineState(engine), new ManualClock(NOW));
    assert.equal(restored.derivedFrom, 'saved');
    sameBoard(engine, restored, false);
    const tampered: ((derived: NonNullable<typeof good.derived>) => void)[] = [
      (d) => d.live++,
      (d) => d.keyCount--,
      (d) => (d.items[0] = d.items[1]!),
      (d) => (d.lengths[1]![0] = d.lengths[1]![0]! - 1),
      (d) => (d.keyTable = new Int32Array(d.keyTable.length)),
      (d) => (d.items[d.items.length - 1] = d.items[0]!),
    ];
    for (const [i, tamper] of tampered.entries()) {
      const state = engineState(engine);
      const derived = state.derived!;
      state.derived = { ...derived, keyTable: derived.keyTable.slice(), items: derived.items.slice(), lengths: derived.lengths.map((l) => l.slice()) };
      tamper(state.derived);
      const body = packStateHere(state);
      const again = decodeEngineState(Buffer.concat(body.parts, body.length), new ManualClock(NOW));
      assert.equal(again.derivedFrom, 'rebuilt', `tampering ${i}`);
      sameBoard(engine, again, false);
      sameBoard(restored, again, true);
    }
    await opened.close();
  }
});

test("a format 2 restore takes the store's columns as it read them, at the store's capacity, and the board then grows as one that never restarted", async () => {
  const dir = dataDir();
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, board);
  await submitBatches(opened, clock, 1, 2);
  const engine = opened.durable.engine;
  const restored = decodeEngineState(encodeEngineState(engine), new ManualClock(NOW));
  const store = restored.store;
  const capacity = store.capacity;
  assert.ok(capacity > store.size, `capacity ${capacity} for ${store.size} slots`);
  for (const name of ['state', 'priceAmerican', 'line', 'seq', 'ring', 'updated'] as const) {
    assert.equal(store[name].length, store.capacity, `${name} spans the capacity`);
  }
  // new rows land in the slots past the restored ones (whose ring column must read "no ring"),
  // get prices (and so history rings), and one more row than the capacity makes the store double
  const fresh: OddsInput[] = [];
  const before = store.size;
  const room = capacity - before + 1;
  board.forEachOdds((row) => {
    if (fresh.length < room) fresh.push({ ...row, selectionId: `${row.selectionId}-after-restore` });
  });
  for (const target of [engine, restored]) target.apply(fresh.map((row) => ({ op: 'upsert', row })));
  assert.equal(store.size, before + room, 'each new row in a new slot');
  const ids = Array.from({ length: 50 }, (_, i) => restored.idOf(before + i));
  for (const target of [engine, restored]) {
    target.apply(ids.map((id, i) => ({ op: 'priceById', id, priceAmerican: 100 + i, suspended: false })));
  }
  assert.ok(store.capacity > capacity, `the store doubled past ${capacity} slots (now ${store.capacity})`);
  sameBoard(engine, restored, false);
  for (const id of ids) {
    const history = [...restored.history(restored.slotOf(id))];
    assert.ok(history.length >= 1, `${id} has a history`);
    assert.deepEqual(history, [...engine.history(engine.slotOf(id))], `${id}'s history`);
  }
  await opened.close();
});
