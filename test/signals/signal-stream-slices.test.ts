// The signal stream's group-topic pushes are sent in slices: a push of many market
// groups is cut into messages of at most MESSAGE_GROUPS groups, which together list
// every changed group passing the filter once, each with the records the screen gives
// for its groups; a steam move made while a push is under way goes out at once, between
// its slices, not after it; and groups marked during a push are pushed after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { decimalToAmerican } from '../../engine/model.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { MESSAGE_GROUPS, SignalTopics, type SignalTopic } from '../../engine/stream/signalTopics.ts';
import type { OddsRowJson } from '../helpers/bruteForce.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

const ALL = { leagues: null, eventIds: null };

function setup(sliceMs: number) {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, testBoard());
  const signals = new EngineSignals(engine);
  const topics = new SignalTopics(signals, () => engine.asOf(), 1, sliceMs);
  const log: { topic: SignalTopic; data: { groups?: string[]; records?: { id: string }[]; move?: { oddsId: string } } }[] = [];
  const sink = { send: (topic: SignalTopic, bytes: Buffer) => { log.push({ topic, data: JSON.parse(bytes.toString('utf8')) }); return true; } };
  /** A second subscriber's messages, as the Buffers it was handed. */
  const twin: Buffer[] = [];
  const twinSink = { send: (_topic: SignalTopic, bytes: Buffer) => { twin.push(bytes); return true; } };
  return { clock, engine, signals, topics, log, sink, twin, twinSink };
}

async function pushed(topics: SignalTopics): Promise<void> {
  // the push starts on its timer (1 ms here) and is sent a slice a turn
  for (let i = 0; i < 1000 && !topics.pushing; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  while (topics.pushing) await new Promise((resolve) => setImmediate(resolve));
}

const rows = (engine: OddsEngine) => boardRows(engine, 'all') as OddsRowJson[];

test('a push of many groups comes as messages of at most MESSAGE_GROUPS groups: every changed group once, each with its current records', async () => {
  const { clock, engine, signals, topics, log, sink, twin, twinSink } = setup(2);
  topics.subscribe({ topic: 'fair_line', query: { ...ALL, devig: 'multiplicative' } }, sink);
  const seen: Buffer[] = [];
  topics.subscribe({ topic: 'fair_line', query: { ...ALL, devig: 'multiplicative' } }, { send: (_topic, bytes) => { seen.push(bytes); return true; } });
  topics.subscribe({ topic: 'fair_line', query: { ...ALL, devig: 'multiplicative' } }, twinSink);
  const event = rows(engine).find((r) => r.market === 'TOTAL')!.eventId;
  topics.subscribe({ topic: 'best_price', query: { leagues: null, eventIds: [event], maxHold: Infinity } }, sink);
  // the board's load marked every group: a tick makes the first push carry them all
  const row = rows(engine).find((r) => r.sportsbook === 'draftkings' && r.priceDecimal !== undefined && !r.suspended)!;
  clock.advance(1000);
  engine.apply([{ op: 'price', slot: engine.slotOf(row.id), priceAmerican: decimalToAmerican(row.priceDecimal! + 0.25), suspended: false }]);
  await pushed(topics);
  const screens = signals.books.screens;
  const everyGroup: string[] = [];
  const eventGroups: string[] = [];
  for (let g = 0; g < signals.groups.id.length; g++) {
    if (screens.passes(g, ALL)) everyGroup.push(signals.groups.id[g]!);
    if (screens.passes(g, { leagues: null, eventIds: [event] })) eventGroups.push(signals.groups.id[g]!);
  }
  assert.ok(everyGroup.length > 3 * MESSAGE_GROUPS, `${everyGroup.length} groups: enough for several messages`);
  for (const [topic, expected] of [['fair_line', everyGroup], ['best_price', eventGroups]] as const) {
    const messages = log.filter((m) => m.topic === topic).map((m) => m.data);
    assert.equal(messages.length, Math.ceil(expected.length / MESSAGE_GROUPS), `${topic}: messages of MESSAGE_GROUPS groups`);
    const listed = messages.flatMap((m) => m.groups!);
    for (const m of messages) assert.ok(m.groups!.length <= MESSAGE_GROUPS && m.groups!.length > 0);
    assert.equal(new Set(listed).size, listed.length, `${topic}: no group twice`);
    assert.deepEqual([...listed].sort(), [...expected].sort(), `${topic}: every changed group passing the filter`);
  }
  // the same request: the same messages, serialised once
  assert.equal(twin.length, seen.length);
  assert.ok(twin.length > 1 && twin.every((bytes, i) => bytes === seen[i]), 'the same Buffers');
  // the records of each message: the screen route's for its groups (the board has not moved since)
  const now = engine.asOf();
  const fair = screens.fairLines({ ...ALL, devig: 'multiplicative' }, now, Infinity, signals);
  const best = screens.bestPrices({ leagues: null, eventIds: [event], maxHold: Infinity }, Infinity, signals);
  for (const m of log) {
    const route = m.topic === 'fair_line' ? fair : best;
    const groups = new Set(m.data.groups);
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    assert.deepEqual([...m.data.records!].sort(byId), JSON.parse(JSON.stringify(route.filter((r) => groups.has(r.id)))).sort(byId));
  }
  topics.close();
  signals.close();
});

test('a steam move during a push goes out between its slices; groups marked during a push are pushed after it', async () => {
  const { clock, engine, signals, topics, log, sink } = setup(0); // one message per subscription per slice
  topics.subscribe({ topic: 'fair_line', query: { ...ALL, devig: 'multiplicative' } }, sink);
  topics.subscribe({ topic: 'steam', query: { ...ALL, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 } }, sink);
  const sharp = rows(engine).find((r) => r.sportsbook === 'pinnacle' && r.market === 'MONEYLINE' && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined && r.priceDecimal > 1.6 && r.priceDecimal < 2.4)!;
  const other = rows(engine).find((r) => r.sportsbook === 'fanduel' && r.priceDecimal !== undefined && !r.suspended && r.eventId !== sharp.eventId)!;
  clock.advance(1000);
  engine.apply([{ op: 'price', slot: engine.slotOf(other.id), priceAmerican: decimalToAmerican(other.priceDecimal! + 0.25), suspended: false }]);
  // once the push's first message is out, the sharp book shortens its price: a move
  while (!log.some((m) => m.topic === 'fair_line')) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.ok(topics.pushing, 'the push is still being sent');
  clock.advance(1000);
  engine.apply([{ op: 'price', slot: engine.slotOf(sharp.id), priceAmerican: decimalToAmerican(1 / (1 / sharp.priceDecimal! + 0.04)), suspended: false }]);
  const steamAt = log.findIndex((m) => m.topic === 'steam');
  assert.ok(steamAt >= 0, 'the move went out with its apply');
  await pushed(topics);
  const lastOfFirstPush = log.length - 1;
  assert.ok(steamAt < lastOfFirstPush, `the move (message ${steamAt}) came before the push ended (message ${lastOfFirstPush})`);
  assert.equal(log[steamAt]!.data.move!.oddsId, sharp.id);
  // the sharp row's group, marked during the push, is the next push
  await pushed(topics);
  const after = log.slice(lastOfFirstPush + 1).filter((m) => m.topic === 'fair_line');
  assert.equal(after.length, 1, 'one message: the group ticked during the first push');
  assert.deepEqual(after[0]!.data.groups, [signals.groups.id[signals.groups.groupOf(engine.slotOf(sharp.id))]]);
  topics.close();
  signals.close();
});
