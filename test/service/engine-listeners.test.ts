// The composition root's list of engine listeners: each one hears the engine's
// changes in the order it was added, and close() stops them newest first, once, even
// when one of them fails to close.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBoard } from '../../engine/loadBoard.ts';
import type { ChangeListener } from '../../engine/engine.ts';
import { oddsId } from '../../engine/model.ts';
import { EngineListeners } from '../../service/engineListeners.ts';
import { boardOf, makeTestBoard, newEngine } from '../helpers/engine-helpers.ts';

function loadedEngine() {
  const board = makeTestBoard(5, 2);
  const { engine } = newEngine();
  loadBoard(engine, boardOf(board));
  const row = board.rows.find((r) => r.priceAmerican !== null)!;
  const slot = engine.slotOf(oddsId(row));
  const tick = () => engine.apply([{ op: 'price', slot, priceAmerican: row.priceAmerican === -150 ? -160 : -150, suspended: row.suspended }]);
  return { engine, tick };
}

/** Records into `heard` when it hears a change and into `stopped` when its close() runs. */
function recorder(name: string, heard: string[], stopped: string[]): ChangeListener & { close(): void } {
  return { rowChanged: () => void heard.push(name), close: () => void stopped.push(name) };
}

test('listeners hear changes in the order they were added and are stopped in reverse, once', () => {
  const { engine, tick } = loadedEngine();
  const heard: string[] = [];
  const stopped: string[] = [];
  const listeners = new EngineListeners(engine);
  listeners.subscribe('first', recorder('first', heard, stopped), (l) => l.close());
  const second = recorder('second', heard, stopped);
  const unsubscribeSecond = engine.subscribe(second); // a listener that subscribes itself
  listeners.own('second', { ...second, close: () => (unsubscribeSecond(), second.close()) });
  listeners.subscribe('third', recorder('third', heard, stopped));

  tick();
  assert.deepEqual(heard, ['first', 'second', 'third']);
  listeners.close();
  assert.deepEqual(stopped, ['second', 'first'], 'third has no finish step; the others run newest first');
  heard.length = 0;
  tick();
  assert.deepEqual(heard, [], 'nothing hears the engine after close');
  listeners.close();
  assert.deepEqual(stopped, ['second', 'first'], 'a second close stops nothing again');
});

test('a listener that fails to close does not keep the others running; the failure is thrown, named', () => {
  const { engine, tick } = loadedEngine();
  const heard: string[] = [];
  const stopped: string[] = [];
  const listeners = new EngineListeners(engine);
  listeners.subscribe('first', recorder('first', heard, stopped), (l) => l.close());
  listeners.subscribe('broken', recorder('broken', heard, stopped), () => {
    throw new Error('disk gone');
  });
  listeners.subscribe('last', recorder('last', heard, stopped), (l) => l.close());

  assert.throws(() => listeners.close(), /closing the broken failed: disk gone/);
  assert.deepEqual(stopped, ['last', 'first']);
  tick();
  assert.deepEqual(heard, [], 'every listener was unsubscribed, the broken one too');
});
