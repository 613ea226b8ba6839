// The write path remembers which slot a ticked id named; a row removed and its slot
// reused by another row must not take the old id's ticks: a tick on the removed id is
// refused (unknown_id) and the row now in that slot keeps its price.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { oddsId, type OddsInput } from '../../engine/model.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { IngestError } from '../../ingest/ingest.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { oddsChange, openBoard, tempDataDir } from './ingest-helpers.ts';

const dir = tempDataDir('ingest-tick-slots-');
after(() => rmSync(dir, { recursive: true, force: true }));

test('a ticked id whose row was removed and whose slot went to another row is refused, and the other row keeps its price', async () => {
  const clock = new ManualClock(NOW);
  const opened = await openBoard(dir, clock, testBoard('small'));
  try {
    const engine = opened.durable.engine;
    const ingest = opened.durable.ingest;
    const s = engine.store;
    const totals: number[] = [];
    for (let slot = 0; slot < s.size && totals.length < 2; slot++) {
      if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && s.markets.get(s.market[slot]) === 'TOTAL' && s.side[slot] === 3) totals.push(slot);
    }
    const [oldSlot, otherSlot] = totals;
    const gone = engine.idOf(oldSlot);
    const other = engine.idOf(otherSlot);

    await ingest.submit([{ op: 'price', id: gone, priceAmerican: -131 }]); // remembered: gone -> oldSlot
    await ingest.submit([{ op: 'remove', id: gone }]);
    clock.advance(11 * 60_000); // past the tombstone retention: the next apply recycles oldSlot
    await ingest.submit([{ op: 'price', id: other, priceAmerican: -140 }]);

    const base = s.rowInput(otherSlot);
    const line = base.line! + 40;
    const fresh: OddsInput = { ...base, selectionId: base.selectionId.replace(`-${base.line}`, `-${line}`), selection: base.selection.replace(String(base.line), String(line)), line, priceAmerican: 170, suspended: false, updated: 0 };
    await ingest.submit([oddsChange(fresh)]);
    assert.equal(engine.slotOf(oddsId(fresh)), oldSlot, 'the new row took the removed row\'s slot (what this test is about)');

    await assert.rejects(ingest.submit([{ op: 'price', id: gone, priceAmerican: -155 }]), (error: unknown) => {
      assert.ok(error instanceof IngestError);
      assert.equal(error.code, 'invalid_batch');
      assert.deepEqual(error.errors.map((e) => [e.index, e.code]), [[0, 'unknown_id']]);
      return true;
    });
    assert.equal(s.priceAmerican[oldSlot], 170);
    await ingest.submit([{ op: 'price', id: oddsId(fresh), priceAmerican: -160 }]);
    assert.equal(s.priceAmerican[oldSlot], -160);
  } finally {
    await opened.close();
  }
});
