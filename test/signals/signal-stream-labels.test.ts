// A +EV record echoes its row's selection label, so a push must list the group when the
// label changed, even at the same slot, price and time. The engine keeps a live row's
// label on an upsert, but a row removed and sent again (a feed renaming a selection)
// comes back in its old slot with the new label; when both happen between two pushes,
// at the same board time and price, every number the fingerprint read before was the
// same, and the new label was never pushed. The fingerprint now folds the interned label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import type { PositiveEvRecord } from '../../engine/signals/screenRecords.ts';
import { SignalTopics, type TopicQuery } from '../../engine/stream/signalTopics.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { inputOf } from '../helpers/engine-helpers.ts';

const EVERY_EV = { topic: 'ev', query: { leagues: null, eventIds: null, devig: 'multiplicative', minEv: -1, sportsbooks: null } } satisfies TopicQuery;

test('a selection label changed at the same slot, price and time is pushed on the ev topic', () => {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, testBoard());
  const signals = new EngineSignals(engine);
  const topics = new SignalTopics(signals, () => engine.asOf(), 60_000);
  const messages: { groups: string[]; records: PositiveEvRecord[] }[] = [];
  topics.subscribe(EVERY_EV, { send: (_topic, bytes) => { messages.push(JSON.parse(bytes.toString('utf8'))); return true; } });
  const push = () => {
    messages.length = 0;
    topics.flush();
    return { groups: messages.flatMap((m) => m.groups), records: messages.flatMap((m) => m.records) };
  };
  try {
    push(); // the full image
    const record = signals.positiveEv(EVERY_EV.query, engine.asOf(), Infinity).find((r) => r.sportsbook === 'draftkings')!;
    assert.ok(record !== undefined, 'a retail quote with a fair line');
    const slot = engine.slotOf(record.id);
    const input = inputOf(engine, slot);
    /** The feed pulls the row and sends it again under another label: same id, slot and price, at the clock's (unmoving) time. */
    const relabel = (selection: string) => engine.apply([{ op: 'remove', id: record.id }, { op: 'upsert', row: { ...input, selection } }]);

    relabel(`${input.selection} (renamed)`);
    const first = push();
    assert.deepEqual(first.groups, [record.groupId], 'the first rename is listed');
    assert.equal(engine.slotOf(record.id), slot, 'revived in its old slot');
    assert.equal(first.records.find((r) => r.id === record.id)?.selection, `${input.selection} (renamed)`);

    // again: now only the label differs from what was pushed (slot, price and time are the same)
    relabel(`${input.selection} (renamed again)`);
    const second = push();
    assert.deepEqual(second.groups, [record.groupId], 'the label change is listed');
    const pushed = second.records.find((r) => r.id === record.id)!;
    assert.equal(pushed.selection, `${input.selection} (renamed again)`);
    assert.deepEqual(pushed, signals.positiveEv(EVERY_EV.query, engine.asOf(), Infinity).find((r) => r.id === record.id), 'equal to what /ev answers');
    assert.deepEqual(push().groups, [], 'nothing changed since: nothing listed');
  } finally {
    topics.close();
    signals.close();
  }
});
