// What a snapshot variant holds in ArrayBuffers (SharedArrayBuffers included). Each one
// is an entry that every full collection walks, and with --single-threaded-gc (a
// service given one core) that walk is in the collection's final pause, on the event
// loop: on the large board with history, five per piece made it 23-28 ms of every
// pause. A piece holds two: its raw bytes (shared memory, the kept rows' table in it
// too) and its deflated bytes. Counted on the medium board with small pieces
// (thousands), before and after a refresh that re-made many of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryObjects } from 'node:v8';
import type { Change } from '../../engine/engine.ts';
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { liveSlots } from '../helpers/engine-helpers.ts';
import { fixtureEngine } from '../helpers/snapshot-helpers.ts';

/** ArrayBuffers and SharedArrayBuffers alive (queryObjects collects garbage first). */
function arrayBuffers(): number {
  return queryObjects(ArrayBuffer, { format: 'count' }) + queryObjects(SharedArrayBuffer, { format: 'count' });
}

/** Per piece: raw bytes and deflated bytes. */
const PER_PIECE = 2;
/** Others the variants hold (render buffers, tables grown by doubling, zlib's output chunks, heads and trailers): about a hundred here. */
const SLACK = 512;

test('a snapshot variant holds at most two ArrayBuffers per piece, also after pieces are re-made', () => {
  const { engine, clock } = fixtureEngine(3, undefined, 'medium');
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 16 * 1024 });
  const before = arrayBuffers();
  for (const withHistory of [false, true]) snapshot.current(withHistory);
  const pieces = () => snapshot.stats().reduce((sum, variant) => sum + variant.pieces, 0);
  assert.ok(pieces() >= 1000, `${pieces()} pieces`);
  const held = arrayBuffers() - before;
  assert.ok(held <= PER_PIECE * pieces() + SLACK, `${held} ArrayBuffers for ${pieces()} pieces`);

  // Re-make a piece in every tenth of the board, ten times over: the pieces replaced
  // are let go, the kept ones still hold two each.
  const slots = liveSlots(engine).filter((slot) => engine.store.priceAmerican[slot] !== 0);
  const remadeBefore = snapshot.stats().reduce((sum, variant) => sum + variant.rendered.piecesRendered, 0);
  for (let round = 1; round <= 10; round++) {
    const changes: Change[] = [];
    for (let i = round; i < slots.length; i += Math.floor(slots.length / 200)) {
      const price = engine.store.priceAmerican[slots[i]];
      changes.push({ op: 'price', slot: slots[i], priceAmerican: price > 0 ? price + 1 : price - 1, suspended: false });
    }
    clock.advance(1);
    engine.apply(changes);
    for (const withHistory of [false, true]) snapshot.current(withHistory);
  }
  const remade = snapshot.stats().reduce((sum, variant) => sum + variant.rendered.piecesRendered, 0) - remadeBefore;
  assert.ok(remade >= 1000, `${remade} pieces re-made`);
  const heldAfter = arrayBuffers() - before;
  assert.ok(heldAfter <= PER_PIECE * pieces() + SLACK, `${heldAfter} ArrayBuffers for ${pieces()} pieces after ${remade} were re-made`);
  snapshot.close();
});
