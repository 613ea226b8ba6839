// Property: a client of the signal stream's group topics that replaces, for each group
// a message lists, what it holds (fair_line, best_price, ev: the group's records;
// middle: the middles of the group's family) holds, after every push, exactly what the
// screen routes answer with the same filter: however the pushes fall between random
// ticks (moves, suspensions, pulls, re-listings, sharp quotes ageing out of the
// staleness window), although a push lists only the groups whose records changed since
// the subscription was last pushed them. A subscriber joining late gets the full image
// first. The fair line's quote ages are compared as the times they count from (a pushed
// record's ages are those at its push). Markets that left the board are dropped by the
// client, as the odds stream tells it to (the group topics do not announce them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine, type Change } from '../../engine/engine.ts';
import { americanToDecimal, decimalToAmerican, oddsId, type OddsInput } from '../../engine/model.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { SignalTopics, type SignalTopic, type TopicQuery } from '../../engine/stream/signalTopics.ts';
import { NOW, row } from '../helpers/signals-harness.ts';
import { BOOKS, GROUPS, SHARP, STALENESS_MS } from '../helpers/screenGroups.ts';

const EVENTS = ['nba-20261121-lal-bos', 'nba-20261121-mia-nyk'];

interface Quote {
  event: number;
  group: number;
  book: number;
  side: number;
}

function inputOf(q: Quote, p: number): OddsInput {
  const g = GROUPS[q.group]!;
  const side = g.sides[q.side] as OddsInput['side'];
  return row({ eventId: EVENTS[q.event]!, sportsbook: BOOKS[q.book]!, side, market: g.market, line: g.lines[q.side]!, teamSide: side === 'HOME' || side === 'AWAY' ? side : 'NONE', priceAmerican: decimalToAmerican(1 / p) });
}

const ALL = { leagues: null, eventIds: null };
/** The subscriptions: each topic unfiltered and with a filter or two. */
const REQUESTS: TopicQuery[] = [
  { topic: 'fair_line', query: { ...ALL, devig: 'multiplicative' } },
  { topic: 'fair_line', query: { leagues: null, eventIds: [EVENTS[0]!], devig: 'power' } },
  { topic: 'best_price', query: { ...ALL, maxHold: Infinity } },
  { topic: 'best_price', query: { ...ALL, maxHold: 0.05 } },
  { topic: 'ev', query: { ...ALL, devig: 'multiplicative', minEv: -1, sportsbooks: null } },
  { topic: 'ev', query: { leagues: ['nba'], eventIds: null, devig: 'shin', minEv: 0.01, sportsbooks: ['draftkings', 'fanduel'] } },
  { topic: 'middle', query: { ...ALL, minWidth: 0, maxCost: Infinity } },
  { topic: 'middle', query: { leagues: null, eventIds: [EVENTS[1]!], minWidth: 0, maxCost: 0.05 } },
];

type Rec = Record<string, unknown> & { id: string };

/** {eventId}:{subtype}:{period}:{line}:{scope} -> {eventId}:{subtype}:{period}:{scope} (a middle's family). */
function familyOfGroup(groupId: string): string {
  const parts = groupId.split(':');
  return [...parts.slice(0, 3), parts[4]].join(':');
}

/** {family}:{low}:{high} -> {family}. */
function familyOfMiddle(id: string): string {
  return id.split(':').slice(0, -2).join(':');
}

/** The fair line's ages as the times they are counted from (ages move with the clock; those times do not). */
function normalised(topic: SignalTopic, record: Rec, at: number): Rec {
  if (topic !== 'fair_line') return record;
  const { oldestQuoteAgeMs, newestQuoteAgeMs, ...rest } = record as Rec & { oldestQuoteAgeMs: number; newestQuoteAgeMs: number };
  return { ...rest, oldestQuoteAt: at - oldestQuoteAgeMs, newestQuoteAt: at - newestQuoteAgeMs };
}

/** A client: per group (middle: per family) what it was last pushed. */
class Mirror {
  readonly held = new Map<string, Rec[]>();
  groupsListed = 0;

  constructor(readonly request: TopicQuery, private readonly boardTime: () => number) {}

  send(_topic: SignalTopic, bytes: Buffer): boolean {
    const message = JSON.parse(bytes.toString('utf8')) as { topic: SignalTopic; groups: string[]; records: Rec[] };
    assert.equal(message.topic, this.request.topic);
    const at = this.boardTime();
    this.groupsListed += message.groups.length;
    for (const id of message.groups) {
      if (this.request.topic === 'middle') {
        const family = familyOfGroup(id);
        this.held.set(family, message.records.filter((r) => familyOfMiddle(r.id) === family));
      } else {
        const topic = this.request.topic;
        this.held.set(id, message.records.filter((r) => (topic === 'ev' ? r.groupId : r.id) === id).map((r) => normalised(topic, r, at)));
      }
    }
    return true;
  }

  /** What it holds of the markets still on the board. */
  records(liveGroups: ReadonlySet<string>): Rec[] {
    const live = this.request.topic === 'middle' ? new Set([...liveGroups].map(familyOfGroup)) : liveGroups;
    const out: Rec[] = [];
    for (const [key, records] of this.held) if (live.has(key)) out.push(...records);
    return out.sort(byId);
  }
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The route's answer (the engine query it makes), as JSON, with the fair line's ages as times. */
function routeAnswer(signals: EngineSignals, engine: OddsEngine, r: TopicQuery): Rec[] {
  const now = engine.asOf();
  let records: unknown[];
  switch (r.topic) {
    case 'fair_line': records = signals.fairLines(r.query, now, Infinity); break;
    case 'best_price': records = signals.bestPrices(r.query, Infinity); break;
    case 'ev': records = signals.positiveEv(r.query, now, Infinity); break;
    case 'middle': records = signals.middles(r.query, Infinity); break;
    case 'steam': records = []; break;
  }
  return (JSON.parse(JSON.stringify(records)) as Rec[]).map((x) => normalised(r.topic, x, now)).sort(byId);
}

const implied = fc.double({ min: 0.08, max: 0.9, noNaN: true });
const quote = fc.record({ event: fc.integer({ min: 0, max: 1 }), group: fc.integer({ min: 0, max: GROUPS.length - 1 }), book: fc.integer({ min: 0, max: BOOKS.length - 1 }), side: fc.integer({ min: 0, max: 2 }) })
  .map((q) => ({ ...q, side: q.side % GROUPS[q.group]!.sides.length }));
const tick = fc.record({
  quote,
  p: implied,
  step: fc.double({ min: -0.04, max: 0.04, noNaN: true }),
  relative: fc.boolean(),
  // requote: the same price again at a later time (feeds do); pull: every row of the market leaves
  kind: fc.constantFrom('price', 'price', 'price', 'requote', 'requote', 'suspend', 'remove', 'pull'),
  elapse: fc.constantFrom(0, 500, 1000, 2500),
  push: fc.boolean(),
});

test('property: a client applying each group-topic push holds what the screen routes answer, after every push', () => {
  const seen = { pushes: 0, listed: 0, compared: 0, records: 0, lateJoins: 0, pulls: 0, middles: 0, fairLines: 0 };
  fc.assert(
    fc.property(fc.array(fc.tuple(quote, implied), { minLength: 8, maxLength: 40 }), fc.array(tick, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 40 }), (start, ticks, lateAt) => {
      const clock = new ManualClock(NOW);
      const engine = new OddsEngine(clock);
      const signals = new EngineSignals(engine, { sharpBooks: SHARP.map((b) => b.sportsbook), stalenessMs: STALENESS_MS }, { sharpBooks: SHARP, stalenessMs: STALENESS_MS });
      const topics = new SignalTopics(signals, () => engine.asOf(), 60_000);
      const mirrors: Mirror[] = [];
      const join = (request: TopicQuery) => {
        const mirror = new Mirror(request, () => engine.asOf());
        topics.subscribe(request, mirror);
        mirrors.push(mirror);
      };
      for (const request of REQUESTS) join(request);
      const check = (step: number) => {
        const live = new Set<string>();
        for (let g = 0; g < signals.groups.capacity; g++) if (signals.groups.isLive(g)) live.add(signals.groups.id[g]!);
        for (const mirror of mirrors) {
          const expected = routeAnswer(signals, engine, mirror.request);
          assert.deepEqual(mirror.records(live), expected, `${JSON.stringify(mirror.request)} after the push at step ${step}`);
          seen.records += expected.length;
          if (mirror.request.topic === 'middle') seen.middles += expected.length;
          if (mirror.request.topic === 'fair_line') seen.fairLines += expected.length;
        }
      };
      const push = (step: number) => {
        topics.flush();
        seen.pushes++;
        check(step);
      };
      clock.advance(1000);
      engine.apply(start.map(([q, p]) => ({ op: 'upsert' as const, row: inputOf(q, p) })));
      const known = new Set(start.map(([q]) => oddsId(inputOf(q, 0.5))));
      push(0);
      ticks.forEach((t, i) => {
        clock.advance(t.elapse);
        const input = inputOf(t.quote, t.p);
        const id = oddsId(input);
        const slot = engine.slotOf(id);
        const live = slot >= 0 && engine.store.isLive(slot);
        const change = (): Change => {
          if (!live) return { op: 'upsert', row: input };
          if (t.kind === 'remove') return { op: 'remove', id };
          const current = engine.store.rowInput(slot).priceAmerican;
          if (t.kind === 'suspend') return { op: 'price', slot, priceAmerican: current, suspended: true };
          if (t.kind === 'requote') return { op: 'price', slot, priceAmerican: current, suspended: false };
          const p = t.relative && current !== null ? Math.min(0.95, Math.max(0.05, 1 / americanToDecimal(current) + t.step)) : t.p;
          return { op: 'price', slot, priceAmerican: decimalToAmerican(1 / p), suspended: false };
        };
        if (live && t.kind === 'pull') {
          // the market leaves the board: every live row of the quote's group
          const group = signals.groups.groupOf(slot);
          const pulled = [...known].filter((other) => {
            const at = engine.slotOf(other);
            return at >= 0 && engine.store.isLive(at) && signals.groups.groupOf(at) === group;
          });
          engine.apply(pulled.map((other) => ({ op: 'remove' as const, id: other })));
          seen.pulls++;
        } else {
          engine.apply([change()]);
          known.add(id);
        }
        if (i === lateAt) {
          // a client joining now: the same request as one already pushed to, and a new one
          join(REQUESTS[0]!);
          join({ topic: 'best_price', query: { leagues: null, eventIds: [EVENTS[1]!], maxHold: 0.1 } });
          seen.lateJoins++;
        }
        if (t.push) push(i + 1);
      });
      push(ticks.length + 1);
      seen.listed += topics.pushStats.listed;
      seen.compared += topics.pushStats.compared;
      topics.close();
      signals.close();
    }),
    { numRuns: 100, seed: 3434 },
  );
  // the generator reaches every case, or the property says little
  for (const [what, count] of Object.entries(seen)) assert.ok(count > 0, `some ${what} (${count})`);
  // the pushes listed fewer groups than they compared: unchanged records were left out
  assert.ok(seen.listed < seen.compared, `listed ${seen.listed} of ${seen.compared} compared`);
});
