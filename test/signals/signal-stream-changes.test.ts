// A group-topic push lists a market group only where its records for that topic (and
// filter) changed since the subscription was last pushed them: a tick on a retail book's
// price below the best changes no fair line, no best price, no middle and (below
// min_ev) no +EV record, so no push lists its group on those topics, while a
// subscription whose records it does change (+EV at min_ev -1) gets it. A tick that makes
// a new best price is listed on best_price only; a fair-line book's tick on fair_line.
// A subscriber joining later with the same request gets its own full image, then shares
// the first one's messages (their channels merge).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { americanToDecimal, decimalToAmerican } from '../../engine/model.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { SignalTopics, type SignalTopic, type TopicQuery } from '../../engine/stream/signalTopics.ts';
import type { OddsRowJson } from '../helpers/bruteForce.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

const ALL = { leagues: null, eventIds: null };
const REQUESTS = {
  fair_line: { topic: 'fair_line', query: { ...ALL, devig: 'multiplicative' } },
  best_price: { topic: 'best_price', query: { ...ALL, maxHold: Infinity } },
  ev: { topic: 'ev', query: { ...ALL, devig: 'multiplicative', minEv: 0.02, sportsbooks: null } },
  middle: { topic: 'middle', query: { ...ALL, minWidth: 0, maxCost: Infinity } },
  everyEv: { topic: 'ev', query: { ...ALL, devig: 'multiplicative', minEv: -1, sportsbooks: null } },
} satisfies Record<string, TopicQuery>;
type Name = keyof typeof REQUESTS;

function setup() {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, testBoard());
  // the board's time is the clock's from here on and does not move: no sharp quote ages
  // out of the staleness window between the pushes (that changes fair lines without a tick)
  const any = boardRows(engine, 'all').find((r) => (r as OddsRowJson).priceAmerican !== undefined) as OddsRowJson;
  engine.apply([{ op: 'price', slot: engine.slotOf(any.id), priceAmerican: any.priceAmerican!, suspended: any.suspended }]);
  const signals = new EngineSignals(engine);
  const topics = new SignalTopics(signals, () => engine.asOf(), 60_000);
  const listed = {} as Record<Name, string[]>;
  for (const name of Object.keys(REQUESTS) as Name[]) {
    listed[name] = [];
    topics.subscribe(REQUESTS[name], { send: (_topic: SignalTopic, bytes: Buffer) => { listed[name].push(...(JSON.parse(bytes.toString('utf8')) as { groups: string[] }).groups); return true; } });
  }
  /** Pushes; returns the groups each subscription's push listed. */
  const push = (): Record<Name, string[]> => {
    for (const name of Object.keys(listed) as Name[]) listed[name] = [];
    topics.flush();
    return { ...listed };
  };
  return { clock, engine, signals, topics, push };
}

const rows = (engine: OddsEngine) => boardRows(engine, 'all') as OddsRowJson[];

test('a tick that changes no record of a topic lists no group of that topic; one that does lists its group there only', () => {
  const { engine, signals, topics, push } = setup();
  const first = push();
  assert.ok(first.fair_line.length > 10 && first.best_price.length > 10, 'the first push is the full image');
  assert.deepEqual(push(), { fair_line: [], best_price: [], ev: [], middle: [], everyEv: [] }, 'nothing changed: nothing listed');

  const now = engine.asOf();
  const ev = signals.positiveEv(REQUESTS.everyEv.query, now, Infinity);
  const best = new Map(signals.bestPrices(REQUESTS.best_price.query, Infinity).map((r) => [r.id, r]));
  // a retail price below its outcome's best, below min_ev, in a market with a fair line and a best-price record
  const quiet = ev.find((e) => e.sportsbook === 'draftkings' && e.ev < 0 && best.get(e.groupId)?.outcomes.find((o) => o.side === e.side)?.priceDecimal! > e.priceDecimal)!;
  assert.ok(quiet !== undefined, 'a retail quote below the best price');
  const slot = engine.slotOf(quiet.id);
  // a worse price: still below the best, further below min_ev
  engine.apply([{ op: 'price', slot, priceAmerican: decimalToAmerican(1 + (quiet.priceDecimal - 1) * 0.9), suspended: false }]);
  const afterQuiet = push();
  assert.deepEqual(afterQuiet.everyEv, [quiet.groupId], 'the +EV record at min_ev -1 changed: listed');
  assert.deepEqual({ ...afterQuiet, everyEv: [] }, { fair_line: [], best_price: [], ev: [], middle: [], everyEv: [] }, 'no record of the other topics changed: no group listed');

  // a new best price: best_price lists the group, the fair line (no sharp quote moved) does not
  const bestOutcome = best.get(quiet.groupId)!.outcomes.find((o) => o.side === quiet.side)!;
  engine.apply([{ op: 'price', slot, priceAmerican: decimalToAmerican(bestOutcome.priceDecimal + 0.2), suspended: false }]);
  const afterBest = push();
  assert.deepEqual(afterBest.best_price, [quiet.groupId]);
  assert.deepEqual(afterBest.fair_line, []);

  // a fair-line book's move: fair_line lists its group
  const fairWithPinnacle = new Set(signals.fairLines(REQUESTS.fair_line.query, engine.asOf(), Infinity).filter((f) => f.sharpBooks.some((b) => b.sportsbook === 'pinnacle')).map((f) => f.id));
  const groupOfRow = (id: string) => signals.groups.id[signals.groups.groupOf(engine.slotOf(id))];
  const sharp = rows(engine).find((r) => r.sportsbook === 'pinnacle' && !r.suspended && r.priceAmerican !== undefined && fairWithPinnacle.has(groupOfRow(r.id)!))!;
  assert.ok(sharp !== undefined, 'a fair line pinnacle takes part in');
  const sharpSlot = engine.slotOf(sharp.id);
  engine.apply([{ op: 'price', slot: sharpSlot, priceAmerican: decimalToAmerican(americanToDecimal(sharp.priceAmerican!) + 0.1), suspended: false }]);
  const afterSharp = push();
  const sharpGroup = signals.groups.id[signals.groups.groupOf(sharpSlot)];
  assert.deepEqual(afterSharp.fair_line, [sharpGroup]);
  topics.close();
  signals.close();
});

test('a later subscriber asking the same gets its own full image, then shares the first one\'s messages', () => {
  const { engine, signals, topics, push } = setup();
  push();
  const request = REQUESTS.best_price;
  const first: Buffer[] = [];
  const later: Buffer[] = [];
  topics.subscribe(request, { send: (_topic, bytes) => { first.push(bytes); return true; } });
  push();
  const groupOfRow = (id: string) => signals.groups.id[signals.groups.groupOf(engine.slotOf(id))];
  const withRecord = new Set(signals.bestPrices(request.query, Infinity).map((r) => r.id));
  const candidates = rows(engine).filter((r) => r.sportsbook === 'fanduel' && !r.suspended && r.priceDecimal !== undefined && withRecord.has(groupOfRow(r.id)!));
  const quotes = [candidates[0]!, candidates.find((r) => groupOfRow(r.id) !== groupOfRow(candidates[0]!.id))!];
  // a new best price (twice the old one) on one market, then the later subscriber joins
  const raise = (r: OddsRowJson) => engine.apply([{ op: 'price', slot: engine.slotOf(r.id), priceAmerican: decimalToAmerican(r.priceDecimal! * 2), suspended: false }]);
  raise(quotes[0]!);
  topics.subscribe(request, { send: (_topic, bytes) => { later.push(bytes); return true; } });
  first.length = 0;
  push();
  const groupsOf = (messages: Buffer[]) => messages.flatMap((m) => (JSON.parse(m.toString('utf8')) as { groups: string[] }).groups);
  assert.deepEqual(groupsOf(first), [groupOfRow(quotes[0]!.id)], 'the first subscriber: the changed market');
  assert.ok(groupsOf(later).length > 10, 'the later one: its full image');
  // from the next push on, one message for both: the same bytes
  first.length = 0;
  later.length = 0;
  raise(quotes[1]!);
  push();
  assert.equal(first.length, 1);
  assert.equal(later.length, 1);
  assert.ok(first[0] === later[0], 'one message, serialised once for both');
  topics.close();
  signals.close();
});
