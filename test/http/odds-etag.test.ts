// ETags and 304s on the odds routes, as a property over random
// interleavings of board changes (price moves, same-price refreshes, removals,
// simulator steps, clock moves without change) and polls: for every URL, the body
// served is fresh (equal to the brute-force oracle), the ETag changes exactly when
// the body bytes change, and If-None-Match with the previous ETag answers 304
// without a body exactly when the body did not change.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestApp, NOW, type TestApp } from '../helpers/app.ts';
import { httpRequest } from '../helpers/server.ts';
import { boardRows, referenceRows, type ReferenceFilter, type Row } from '../helpers/oddsReference.ts';

let t: TestApp;

interface Probe {
  route: string;
  path: string;
  filter: ReferenceFilter;
  limit: number;
  format?: 'all' | 'american' | 'decimal' | 'probability';
}

function probes(): Probe[] {
  const rows = boardRows(t.app.engine, 'all');
  const event = rows.find((r) => r.league === 'nba' && r.marketScope === undefined)!.eventId;
  const player = rows.find((r) => r.playerId !== undefined && r.league === 'nfl')!.playerId;
  const team = t.app.engine.event(rows.find((r) => r.league === 'epl' && r.marketScope === undefined)!.eventId)!.homeTeamId!;
  return [
    { route: '/api/v1/odds', path: '/api/v1/odds?league=nba&limit=50', filter: { leagues: ['nba'] }, limit: 50 },
    { route: '/api/v1/odds', path: '/api/v1/odds?sportsbook=pinnacle&market=total&is_main=true&limit=1000', filter: { sportsbooks: ['pinnacle'], markets: ['TOTAL'], isMain: true }, limit: 1000 },
    { route: '/api/v1/odds', path: '/api/v1/odds?league=mlb,epl&odds_format=probability&limit=1000', filter: { leagues: ['epl'] }, limit: 1000, format: 'probability' },
    { route: '/api/v1/odds', path: '/api/v1/odds?sportsbook=nosuchbook', filter: { sportsbooks: ['nosuchbook'] }, limit: 100 },
    { route: '/api/v1/odds', path: '/api/v1/odds?scope=tournament&limit=1000', filter: { scope: 'tournament' }, limit: 1000 },
    { route: '/api/v1/events/:eventId/odds', path: `/api/v1/events/${event}/odds`, filter: { eventIds: [event] }, limit: Infinity },
    { route: '/api/v1/events/:eventId/odds', path: `/api/v1/events/${event}/odds?is_main=1&odds_format=decimal`, filter: { eventIds: [event], isMain: true }, limit: Infinity, format: 'decimal' },
    { route: '/api/v1/players/:playerId/odds', path: `/api/v1/players/${player}/odds?limit=1000`, filter: { playerId: player }, limit: 1000 },
    { route: '/api/v1/teams/:teamId/odds', path: `/api/v1/teams/${team}/odds?limit=1000`, filter: { teamId: team }, limit: 1000 },
    { route: '/api/v1/odds/updated', path: `/api/v1/odds/updated?since=${NOW}&league=nba,nfl&limit=1000`, filter: { since: NOW, leagues: ['nba', 'nfl'] }, limit: 1000 },
  ];
}

/** The page the oracle expects: data, and meta.updated where it is defined by the rows. */
function expectedPage(probe: Probe): { data: Row[]; more: boolean; updated: string | null } {
  const all = referenceRows(t.app.engine, probe.filter, probe.format ?? 'all');
  const data = all.slice(0, probe.limit);
  if (probe.filter.since !== undefined) return { data, more: all.length > data.length, updated: new Date(t.app.engine.asOf()).toISOString() };
  const updated = data.length === 0 ? null : data.map((row) => row.updated as string).sort().at(-1)!;
  return { data, more: all.length > data.length, updated };
}

type Action =
  | { kind: 'move'; pick: number; dt: number }
  | { kind: 'same'; pick: number; dt: number }
  | { kind: 'remove'; pick: number; dt: number }
  | { kind: 'simulate'; changes: number }
  | { kind: 'idle'; dt: number }
  | { kind: 'poll'; probe: number };

function liveRow(pick: number, priced: boolean): Row | undefined {
  const rows = boardRows(t.app.engine, 'all').filter((row) => !priced || row.priceAmerican !== undefined);
  return rows.length === 0 ? undefined : rows[pick % rows.length];
}

function perform(action: Action): void {
  const engine = t.app.engine;
  switch (action.kind) {
    case 'move':
    case 'same': {
      const row = liveRow(action.pick, true);
      if (row === undefined) return;
      t.clock.advance(action.dt);
      const price = action.kind === 'same' ? row.priceAmerican : row.priceAmerican === -110 ? 105 : -110;
      engine.apply([{ op: 'price', slot: engine.slotOf(row.id), priceAmerican: price, suspended: row.suspended }]);
      return;
    }
    case 'remove': {
      const row = liveRow(action.pick, false);
      if (row === undefined) return;
      t.clock.advance(action.dt);
      engine.apply([{ op: 'remove', id: row.id }]);
      return;
    }
    case 'simulate':
      t.app.simulator.step(action.changes);
      return;
    case 'idle':
      t.clock.advance(action.dt);
      return;
    case 'poll':
      return;
  }
}

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('move' as const), pick: fc.nat(), dt: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('same' as const), pick: fc.nat(), dt: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat(), dt: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('simulate' as const), changes: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('idle' as const), dt: fc.integer({ min: 0, max: 5000 }) }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('poll' as const), probe: fc.nat() }) },
);

describe('ETag and 304 on the odds routes', () => {
  before(async () => {
    t = await startTestApp({ simulatorSeed: 11 });
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('fresh bodies; ETag changes iff the body bytes change; 304 iff unchanged', async () => {
    const list = probes();
    let polls = 0;
    let notModified = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 4, maxLength: 14 }), async (actions) => {
        const seen = new Map<number, { etag: string; body: Buffer }>();
        // Every probe is polled after the board settles between actions.
        for (const action of [...actions, ...list.map((_, i) => ({ kind: 'poll' as const, probe: i }))]) {
          perform(action);
          if (action.kind !== 'poll') continue;
          const index = action.probe % list.length;
          const probe = list[index]!;
          const previous = seen.get(index);
          const conditional = await httpRequest(t.port, probe.path, previous === undefined ? {} : { headers: { 'If-None-Match': previous.etag } });
          const { reply, body } = await t.call(probe.route, probe.path);
          assert.equal(reply.status, 200);
          const expected = expectedPage(probe);
          assert.deepEqual(body.data, expected.data, `${probe.path}: stale or wrong rows`);
          assert.equal(body.nextCursor !== null, expected.more);
          if (expected.updated !== null) assert.equal(body.meta.updated, expected.updated);
          const etag = reply.headers.etag!;
          polls++;
          if (previous !== undefined) {
            const same = previous.body.equals(reply.body);
            assert.equal(etag === previous.etag, same, `${probe.path}: ETag ${same ? 'changed without' : 'kept despite'} a body change`);
            assert.equal(conditional.status, same ? 304 : 200, `${probe.path}: If-None-Match answer`);
            if (same) {
              notModified++;
              assert.equal(conditional.body.length, 0);
            } else assert.ok(conditional.body.equals(reply.body));
          }
          seen.set(index, { etag, body: reply.body });
        }
      }),
      { numRuns: 25 },
    );
    assert.ok(notModified > polls / 10, `${notModified} of ${polls} polls were 304s`);
  });

  it('an unchanged empty page keeps its ETag while the board moves', async () => {
    const path = '/api/v1/odds?league=nba&market=no_such_market';
    const first = await t.call('/api/v1/odds', path);
    assert.deepEqual(first.body.data, []);
    t.app.simulator.step(200);
    const again = await t.call('/api/v1/odds', path, { headers: { 'If-None-Match': first.reply.headers.etag! } });
    assert.equal(again.reply.status, 304);
  });
});
