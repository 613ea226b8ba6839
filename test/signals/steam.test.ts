// Steam moves by hand: the window's starting price, one move per starting price, the
// cents unit, and the books that have not followed; the detector's state through a
// checkpoint's encoding and back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { CHECKPOINT_PACK_OPTIONS } from '../../engine/checkpoint.ts';
import { oddsId } from '../../engine/model.ts';
import type { SteamRecord } from '../../engine/signals/screenRecords.ts';
import { STEAM_RING } from '../../engine/signals/steamDetector.ts';
import { NOW, row, SignalBoard } from '../helpers/signals-harness.ts';

function board(unit: 'points' | 'cents', threshold: number): { board: SignalBoard; moves: SteamRecord[] } {
  const b = new SignalBoard({}, { steam: { unit, threshold, windowMs: 60_000, keep: 100 } });
  const moves: SteamRecord[] = [];
  b.books.steam.onMove = (m) => moves.push(m);
  for (const [book, home, away] of [['pinnacle', -110, -110], ['draftkings', -105, -115], ['fanduel', -120, 100]] as const) {
    b.upsert(row({ sportsbook: book, side: 'HOME', priceAmerican: home, updated: NOW }));
    b.upsert(row({ sportsbook: book, side: 'AWAY', priceAmerican: away, updated: NOW }));
  }
  return { board: b, moves };
}

const PIN_HOME = oddsId(row({ sportsbook: 'pinnacle', side: 'HOME' }));

test('a sharp shortening past the threshold is one move, with the books still paying more', () => {
  const { board: b, moves } = board('points', 2);
  b.change(PIN_HOME, { priceAmerican: -115, updated: NOW + 10_000 }); // 52.38 -> 53.49: 1.1 points
  assert.equal(moves.length, 0);
  b.change(PIN_HOME, { priceAmerican: -125, updated: NOW + 20_000 }); // -> 55.56: 3.2 points from -110
  assert.equal(moves.length, 1);
  const move = moves[0]!;
  assert.equal(move.fromPriceAmerican, -110);
  assert.equal(move.toPriceAmerican, -125);
  assert.equal(move.moveCents, 15);
  assert.ok(Math.abs(move.movePoints - (100 / 1.8 - 100 / 1.9091)) < 1e-9, `${move.movePoints}`);
  assert.equal(move.from, new Date(NOW).toISOString());
  // draftkings -105 and fanduel -120 both still pay more than -125 on HOME
  assert.deepEqual(move.staleBooks.map((s) => [s.sportsbook, s.priceAmerican]), [['draftkings', -105], ['fanduel', -120]]);
  // shortening further from the same starting price is the same move
  b.change(PIN_HOME, { priceAmerican: -135, updated: NOW + 30_000 });
  assert.equal(moves.length, 1);
  // a minute on, -115 is the price in force at the window's start: -115 -> -150 is a new move
  b.change(PIN_HOME, { priceAmerican: -150, updated: NOW + 75_000 });
  assert.equal(moves.length, 2);
  assert.equal(moves[1]!.fromPriceAmerican, -115);
  // a drift (the price lengthening) is never a move on its side
  b.change(PIN_HOME, { priceAmerican: 120, updated: NOW + 80_000 });
  assert.equal(moves.length, 2);
  assert.deepEqual(b.books.steam.list({ leagues: null, eventIds: null, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 }, 10).map((m) => m.id), [moves[1]!.id, moves[0]!.id]);
});

test('cents: -105 -> +105 is 10 cents, not 210; non-sharp books never steam', () => {
  const { board: b, moves } = board('cents', 10);
  b.change(oddsId(row({ sportsbook: 'draftkings', side: 'HOME' })), { priceAmerican: -140, updated: NOW + 1000 });
  assert.equal(moves.length, 0);
  const away = oddsId(row({ sportsbook: 'pinnacle', side: 'AWAY' }));
  b.change(away, { priceAmerican: -102, updated: NOW + 2000 }); // 8 cents: shortening, below 10
  assert.equal(moves.length, 0);
  b.change(away, { priceAmerican: -120, updated: NOW + 3000 }); // 10 cents from -110
  assert.equal(moves.length, 1);
  assert.equal(moves[0]!.moveCents, 10);
});

test('saved with a checkpoint and restored, the detector lists the same moves and goes on as the original does', () => {
  const packr = new Packr(CHECKPOINT_PACK_OPTIONS);
  const all = { leagues: null, eventIds: null, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 };
  const original = board('points', 2).board;
  const away = oddsId(row({ sportsbook: 'pinnacle', side: 'AWAY' }));
  // more changes than a ring keeps (it wraps), some of them moves
  const prices = [-112, -118, -130, -125, -140, -135, -150, -145, -160, -155, -170];
  prices.forEach((price, i) => original.change(PIN_HOME, { priceAmerican: price, updated: NOW + 7_000 * (i + 1) }));
  original.change(away, { priceAmerican: -125, updated: NOW + 20_000 });
  const saved = packr.unpack(packr.pack(original.books.steam.saveState()));

  // a new board: the state first, then the rows as they stand (as the restored engine's first full read)
  const restored = new SignalBoard({}, { steam: { unit: 'points', threshold: 2, windowMs: 60_000, keep: 100 } });
  restored.books.steam.restoreState(saved);
  for (const input of original.rows()) restored.upsert(input);
  const list = (b: SignalBoard) => JSON.stringify(b.books.steam.list(all, 100));
  assert.ok(original.books.steam.count >= 3, `only ${original.books.steam.count} moves`);
  assert.equal(list(restored), list(original));
  assert.equal(restored.books.steam.count, original.books.steam.count);
  // the same ticks after the restore make the same moves: each row's history came back
  for (const b of [original, restored]) {
    b.change(PIN_HOME, { priceAmerican: -185, updated: NOW + 90_000 });
    b.change(away, { priceAmerican: -128, updated: NOW + 95_000 }); // 0.6 points from -125: no move
    b.change(away, { priceAmerican: -140, updated: NOW + 100_000 }); // 2.9 points from -125 at the window's start
  }
  assert.equal(list(restored), list(original));
  assert.equal(restored.books.steam.list(all, 1)[0]!.fromPriceAmerican, -125);
});

test('a version-1 state (each row padded to the ring, as checkpoints before version 2 hold it) restores as the compact one does', () => {
  const all = { leagues: null, eventIds: null, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 };
  const original = board('points', 2).board;
  const away = oddsId(row({ sportsbook: 'pinnacle', side: 'AWAY' }));
  [-112, -118, -130, -125, -140, -135, -150, -145, -160, -155, -170].forEach((price, i) => original.change(PIN_HOME, { priceAmerican: price, updated: NOW + 7_000 * (i + 1) }));
  original.change(away, { priceAmerican: -125, updated: NOW + 20_000 });
  const compact = original.books.steam.saveState();
  const counts = [...compact.counts];
  assert.equal(compact.version, 2);
  assert.equal(compact.times.length, counts.reduce((a, b) => a + b, 0), 'version 2 keeps only the changes held');
  assert.ok(counts.some((c) => c === STEAM_RING) && counts.some((c) => c < STEAM_RING), `counts ${counts}`);
  const n = compact.refs.length;
  const times = new Float64Array(n * STEAM_RING);
  const prices = new Float64Array(n * STEAM_RING);
  for (let i = 0, e = 0; i < n; i++) {
    for (let j = 0; j < counts[i]!; j++, e++) {
      times[i * STEAM_RING + j] = compact.times[e]!;
      prices[i * STEAM_RING + j] = compact.prices[e]!;
    }
  }
  const padded = { ...compact, version: 1, times, prices };
  const restoredFrom = (state: unknown) => {
    const b = new SignalBoard({}, { steam: { unit: 'points', threshold: 2, windowMs: 60_000, keep: 100 } });
    b.books.steam.restoreState(state);
    for (const input of original.rows()) b.upsert(input);
    return b;
  };
  const boards = [original, restoredFrom(compact), restoredFrom(padded)];
  for (const b of boards) {
    b.change(PIN_HOME, { priceAmerican: -185, updated: NOW + 90_000 });
    b.change(away, { priceAmerican: -140, updated: NOW + 100_000 });
  }
  const lists = boards.map((b) => JSON.stringify(b.books.steam.list(all, 100)));
  assert.equal(lists[1], lists[0]);
  assert.equal(lists[2], lists[0]);
  // a version-2 state whose counts do not add up to its changes is not one this version wrote
  assert.throws(() => restoredFrom({ ...compact, times: compact.times.subarray(1), prices: compact.prices.subarray(1) }), /steam state is not one this version reads \(version 2/);
});

test('a saved steam state this version cannot read is refused with a clear error', () => {
  const b = new SignalBoard();
  assert.throws(() => b.books.steam.restoreState({ version: 99 }), /steam state is not one this version reads \(version 99/);
  assert.throws(() => b.books.steam.restoreState(null), /steam state is not one this version reads/);
});
