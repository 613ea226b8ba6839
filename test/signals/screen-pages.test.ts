// The screen routes' cursors and ETags on the real app (both transports: test/run.ts
// runs HTTP tests on node:http too):
// - property: with the board still, a page walk of any size returns exactly the records
//   of one unpaginated answer, each once, in serving order; with the board moving between
//   pages (simulated ticks, the clock moving), the walk never goes backwards in serving
//   order, returns each record that stayed the same throughout exactly once, and on
//   /fair-lines and /steam (whose keys never move) no record twice;
// - a cursor altered, or sent back with other filters, answers 400 invalid_cursor;
// - If-None-Match answers 304 while nothing in the page changed, though the board moved
//   elsewhere (on /fair-lines too, whose ages moved: its ETag is weak), and 200 with a
//   new ETag once a record of the page changed; an empty page keeps its ETag.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decimalToAmerican } from '../../engine/model.ts';
import type { OddsRowJson } from '../helpers/bruteForce.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

type Rec = Record<string, any> & { id: string };

interface Screen {
  route: string;
  queries: string[];
  /** The serving order's key of a record (compared as [number, string]). */
  key(r: Rec): [number, string];
  /** Whether a record's key can move while it exists (sorted by a score that changes). */
  moving: boolean;
}

const SCREENS: Screen[] = [
  { route: '/api/v1/fair-lines', queries: ['devig=multiplicative', 'devig=power&league=nba,nfl'], key: (r) => [0, r.id], moving: false },
  { route: '/api/v1/best-prices', queries: ['max_hold=1', 'max_hold=0.06'], key: (r) => [r.hold, r.id], moving: true },
  { route: '/api/v1/ev', queries: ['min_ev=-0.03', 'min_ev=-0.2&sportsbook=draftkings,fanduel&devig=shin'], key: (r) => [-r.ev, r.id], moving: true },
  { route: '/api/v1/middles', queries: ['max_cost=1', 'min_width=1&max_cost=0.5'], key: (r) => [r.worstCaseCost, r.id], moving: true },
  { route: '/api/v1/steam', queries: ['min_points=0', 'sportsbook=pinnacle'], key: (r) => [-Date.parse(r.at), ''], moving: false },
];

function compareKeys(a: [number, string], b: [number, string]): number {
  return a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
}

/** A record as compared across reads: a fair line without its ages (they move with the board's time alone). */
function comparable(r: Rec): string {
  const { oldestQuoteAgeMs: _o, newestQuoteAgeMs: _n, ...rest } = r;
  return JSON.stringify(rest);
}

describe('screen routes: cursors and ETags', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ simulatorSeed: 11 });
    // steam moves to walk: fair-line books' prices shortened by 4 points, a second apart
    const engine = t.app.engine;
    const sharp = (boardRows(engine, 'all') as OddsRowJson[]).filter((r) => (r.sportsbook === 'pinnacle' || r.sportsbook === 'circa') && !r.suspended && r.priceDecimal !== undefined && r.priceDecimal > 1.5 && r.priceDecimal < 3);
    for (const r of sharp.slice(0, 40)) {
      t.clock.advance(1000);
      engine.apply([{ op: 'price', slot: engine.slotOf(r.id), priceAmerican: decimalToAmerican(1 / (1 / r.priceDecimal! + 0.04)), suspended: false }]);
    }
  });
  after(async () => {
    await t.close();
  });

  /** Walks a route page by page from `path`; `between` runs between pages. */
  async function walk(route: string, path: string, between: () => void = () => {}): Promise<{ records: Rec[]; pages: Rec[][] }> {
    const pages: Rec[][] = [];
    let url = path;
    for (let n = 0; n < 10_000; n++) {
      const { reply, body } = await t.call(route, url);
      assert.equal(reply.status, 200, reply.body.toString());
      pages.push(body.data);
      if (body.nextCursor === null) return { records: pages.flat(), pages };
      assert.equal(body.data.length, Number(new URLSearchParams(path.split('?')[1]).get('limit')), 'a page before the last is full');
      between();
      url = `${path}&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
    throw new Error('the walk did not end');
  }

  it('property: a walk returns each record once, in order; under a moving board it never goes backwards and loses no record that stayed the same', async () => {
    const cases = fc.record({ screen: fc.integer({ min: 0, max: SCREENS.length - 1 }), query: fc.integer({ min: 0, max: 1 }), limit: fc.integer({ min: 3, max: 60 }), ticks: fc.integer({ min: 0, max: 80 }) });
    await fc.assert(
      fc.asyncProperty(cases, async ({ screen: s, query: qi, limit, ticks }) => {
        const screen = SCREENS[s]!;
        const query = screen.queries[qi]!;
        // the board still: exactly one unpaginated answer
        const whole = (await t.call(screen.route, `${screen.route}?${query}&limit=1000`)).body;
        const still = await walk(screen.route, `${screen.route}?${query}&limit=${limit}`);
        if (whole.nextCursor === null) assert.deepEqual(still.records.map(comparable), whole.data.map(comparable), `${screen.route}?${query} limit ${limit}: the walk is the whole answer`);
        assert.equal(new Set(still.records.map((r) => r.id)).size, still.records.length, 'each record once');

        // the board moving between pages
        const start = await walk(screen.route, `${screen.route}?${query}&limit=1000`);
        const moving = await walk(screen.route, `${screen.route}?${query}&limit=${limit}`, () => {
          t.clock.advance(1000);
          t.app.simulator.step(ticks);
        });
        const end = await walk(screen.route, `${screen.route}?${query}&limit=1000`);
        for (let i = 1; i < moving.records.length; i++) {
          assert.ok(compareKeys(screen.key(moving.records[i - 1]!), screen.key(moving.records[i]!)) <= 0, `${screen.route}: order broken at ${moving.records[i]!.id}`);
        }
        const endById = new Map(end.records.map((r) => [r.id, comparable(r)]));
        const stable = start.records.filter((r) => endById.get(r.id) === comparable(r)).map((r) => r.id);
        const counts = new Map<string, number>();
        for (const r of moving.records) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
        for (const id of stable) assert.equal(counts.get(id), 1, `${screen.route}?${query}: ${id} stayed the same but was returned ${counts.get(id) ?? 0} times`);
        if (!screen.moving) for (const [id, n] of counts) assert.equal(n, 1, `${screen.route}: ${id} returned ${n} times`);
      }),
      { numRuns: 14, seed: 34 },
    );
  });

  it('a cursor altered, or sent back with other filters, is refused with 400 invalid_cursor', async () => {
    const first = (await t.call('/api/v1/best-prices', '/api/v1/best-prices?max_hold=1&limit=2')).body;
    assert.notEqual(first.nextCursor, null);
    const other = await t.call('/api/v1/best-prices', `/api/v1/best-prices?max_hold=0.5&limit=2&cursor=${first.nextCursor}`);
    assert.equal(other.reply.status, 400);
    assert.equal(other.body.code, 'invalid_cursor');
    const altered = `${first.nextCursor.slice(0, -2)}${first.nextCursor.endsWith('AA') ? 'BB' : 'AA'}`;
    const bad = await t.call('/api/v1/best-prices', `/api/v1/best-prices?max_hold=1&limit=2&cursor=${altered}`);
    assert.equal(bad.reply.status, 400);
    assert.equal(bad.body.code, 'invalid_cursor');
    // a well-signed cursor of another list shape (fair lines key on the id alone)
    const fair = (await t.call('/api/v1/fair-lines', '/api/v1/fair-lines?limit=1')).body;
    const swapped = await t.call('/api/v1/steam', `/api/v1/steam?limit=1&cursor=${fair.nextCursor}`);
    assert.equal(swapped.reply.status, 400);
  });

  it('If-None-Match: 304 while the page is unchanged, the board moving elsewhere; 200 and a new ETag once a record of it changed', async () => {
    const engine = t.app.engine;
    const rows = boardRows(engine, 'all') as OddsRowJson[];
    const events = [...new Set(rows.map((r) => r.eventId))];
    // an event with fair lines (so its page's bytes carry ages)
    const fairs = (await t.call('/api/v1/fair-lines', '/api/v1/fair-lines?limit=1000')).body.data as Rec[];
    const event = fairs[0]!.eventId as string;
    const elsewhere = rows.find((r) => r.eventId !== event && r.sportsbook === 'draftkings' && !r.suspended && r.priceDecimal !== undefined)!;
    assert.ok(events.length > 1 && elsewhere !== undefined);
    const paths: [string, string][] = [
      ['/api/v1/best-prices', `/api/v1/best-prices?event_id=${event}&limit=3`],
      ['/api/v1/fair-lines', `/api/v1/fair-lines?event_id=${event}&limit=3`],
      ['/api/v1/ev', `/api/v1/ev?event_id=${event}&min_ev=-0.1&limit=3`],
      ['/api/v1/middles', `/api/v1/middles?event_id=${event}&max_cost=1&limit=3`],
      ['/api/v1/steam', `/api/v1/steam?event_id=${event}&limit=3`],
      ['/api/v1/best-prices', '/api/v1/best-prices?event_id=no-such-event'],
    ];
    const first = await Promise.all(paths.map(async ([route, path]) => (await t.call(route, path)).reply));
    assert.match(String(first[1]!.headers.etag), /^W\//, 'the fair lines\' ETag is weak');
    assert.match(String(first[0]!.headers.etag), /^"/, 'the others are strong');
    // a tick on another event: the board's time moves, these pages do not
    t.clock.advance(5000);
    engine.apply([{ op: 'price', slot: engine.slotOf(elsewhere.id), priceAmerican: decimalToAmerican(elsewhere.priceDecimal! + 0.05), suspended: false }]);
    for (const [i, [route, path]] of paths.entries()) {
      const again = await t.call(route, path, { headers: { 'If-None-Match': String(first[i]!.headers.etag) } });
      assert.equal(again.reply.status, 304, `${path} unchanged`);
    }
    // the fair lines' bytes did move (their ages), their validator did not
    const fairNow = await t.call(paths[1]![0], paths[1]![1]);
    assert.notDeepEqual(fairNow.reply.body, first[1]!.body, 'the ages moved with the board\'s time');
    assert.equal(fairNow.reply.headers.etag, first[1]!.headers.etag);
    // a new best price in the page's first market: a new body and ETag
    const market = (JSON.parse(first[0]!.body.toString()).data as Rec[])[0]!;
    const leg = rows.find((r) => r.id === market.outcomes[0].oddsId)!;
    engine.apply([{ op: 'price', slot: engine.slotOf(leg.id), priceAmerican: decimalToAmerican(market.outcomes[0].priceDecimal + 0.3), suspended: false }]);
    const changed = await t.call(paths[0]![0], paths[0]![1], { headers: { 'If-None-Match': String(first[0]!.headers.etag) } });
    assert.equal(changed.reply.status, 200);
    assert.notEqual(changed.reply.headers.etag, first[0]!.headers.etag);
  });
});
