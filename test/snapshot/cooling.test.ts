// Rows cooling down re-render a few at a time, as they come due, not in one burst: a
// row is hot while its last moves are recent, and when it cools its piece grows back,
// so the refresh that finds it cold re-renders it. Rows turned hot one after another
// over a minute cool one after another over the same minute; a refresh each second
// re-renders only the few due by then (with heat judged in whole minutes all of them
// came due in one refresh: on the large board 3,016 pieces at once).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change, OddsEngine } from '../../engine/engine.ts';
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { HOT_MOVES, HOT_SECONDS } from '../../engine/snapshot/rowCuts.ts';
import { liveSlots } from '../helpers/engine-helpers.ts';
import { fixtureEngine } from '../helpers/snapshot-helpers.ts';

const HOT_ROWS = 40;
/** Seconds between two rows turning hot: the hot rows cool over HOT_ROWS * this. */
const SPREAD_SECONDS = 1.5;

function move(engine: OddsEngine, slot: number, by: number): Change {
  const price = engine.store.priceAmerican[slot];
  return { op: 'price', slot, priceAmerican: price > 0 ? price + by : price - by, suspended: false };
}

test('rows turned hot over a minute cool over a minute: each refresh re-renders only those due', () => {
  const { engine, clock } = fixtureEngine(5);
  const priced = liveSlots(engine).filter((slot) => engine.store.priceAmerican[slot] !== 0);
  // Hot rows far apart in the body (each in a piece of its own), tick rows elsewhere.
  const stride = Math.floor(priced.length / (2 * HOT_ROWS));
  const hot = Array.from({ length: HOT_ROWS }, (_, i) => priced[2 * i * stride]);
  const ticks = Array.from({ length: 90 }, (_, i) => priced[(2 * i + 1) * Math.floor(priced.length / 180)]).filter((slot) => !hot.includes(slot));
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 4096 });
  snapshot.current(false);
  for (const slot of hot) {
    for (let m = 1; m <= HOT_MOVES; m++) {
      clock.advance(10);
      engine.apply([move(engine, slot, m)]);
    }
    clock.advance(SPREAD_SECONDS * 1000);
  }
  snapshot.current(false);
  // From just before the first hot row is due to cool until after the last: one tick
  // and one refresh per second (a tick row moves at most once, so it never turns hot).
  // (The jump there cools the board's own hot rows due meanwhile, in the refresh
  // after it, which is not counted.)
  clock.advance((HOT_SECONDS - HOT_ROWS * SPREAD_SECONDS - 5) * 1000);
  engine.apply([move(engine, ticks[ticks.length - 1], 1)]);
  snapshot.current(false);
  const stats = () => snapshot.stats()[0].rendered;
  const before = stats().rowsRendered;
  let most = 0;
  for (let second = 0; second < HOT_ROWS * SPREAD_SECONDS + 15; second++) {
    clock.advance(1000);
    engine.apply([move(engine, ticks[second % ticks.length], 1)]);
    const pieces = stats().piecesRendered;
    snapshot.current(false);
    most = Math.max(most, stats().piecesRendered - pieces);
  }
  // Every hot row was re-rendered once it cooled (plus a tick row a second)...
  assert.ok(stats().rowsRendered - before >= HOT_ROWS, `${stats().rowsRendered - before} rows re-rendered`);
  // ...a few at a time: the tick's piece and at most two cooled rows' pieces, each
  // with the neighbour its cut may move into.
  assert.ok(most <= 6, `one refresh re-rendered ${most} pieces`);
  snapshot.close();
});
