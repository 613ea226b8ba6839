// Market groups: the key rules (line-key, scope, exclusions) and the membership lists
// (attach/detach/release) against a plain Map model.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { marketGroupIdOf } from '../../engine/signals/groupKey.ts';
import { MarketGroups, NONE, type GroupRowInput } from '../../engine/signals/marketGroups.ts';
import { OUTCOMES_HOME_AWAY, OUTCOMES_HOME_DRAW_AWAY, OUTCOMES_OVER_UNDER } from '../../engine/signals/sides.ts';

const START = Date.parse('2026-11-21T15:00:00Z');

function input(fields: Partial<GroupRowInput>): GroupRowInput {
  return {
    eventId: 'nba-e1', league: 'nba', market: 'SPREAD', marketSubtype: 'SPREAD', period: 'FULL', side: 'HOME', teamSide: 'HOME',
    line: null, playerId: null, playerName: null, marketScope: null, eventStartTime: START, ...fields,
  };
}

test('group ids: home line for spreads, scope by player or team side, futures and YES excluded', () => {
  assert.equal(marketGroupIdOf(input({ side: 'HOME', line: -3.5 })), 'nba-e1:SPREAD:FULL:m3.5:game');
  assert.equal(marketGroupIdOf(input({ side: 'AWAY', teamSide: 'AWAY', line: 3.5 })), 'nba-e1:SPREAD:FULL:m3.5:game');
  assert.equal(marketGroupIdOf(input({ side: 'AWAY', teamSide: 'AWAY', line: 0 })), 'nba-e1:SPREAD:FULL:0:game');
  assert.equal(marketGroupIdOf(input({ side: 'AWAY', teamSide: 'AWAY', line: -4.5 })), 'nba-e1:SPREAD:FULL:4.5:game');
  assert.equal(marketGroupIdOf(input({ market: 'MONEYLINE', marketSubtype: 'MONEYLINE' })), 'nba-e1:MONEYLINE:FULL:none:game');
  assert.equal(marketGroupIdOf(input({ market: 'TOTAL', marketSubtype: 'TOTAL', side: 'UNDER', teamSide: 'NONE', line: 221.5 })), 'nba-e1:TOTAL:FULL:221.5:game');
  assert.equal(marketGroupIdOf(input({ market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', side: 'OVER', teamSide: 'AWAY', line: 110.5 })), 'nba-e1:TEAM_TOTAL:FULL:110.5:AWAY');
  assert.equal(
    marketGroupIdOf(input({ market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', period: '1H', side: 'OVER', line: 12.5, playerId: 'nba-bos-jt' })),
    'nba-e1:PLAYER_TOTAL_POINTS:1H:12.5:nba-bos-jt',
  );
  assert.equal(marketGroupIdOf(input({ marketScope: 'SEASON', market: 'TOTAL', side: 'OVER', line: 50.5 })), null);
  assert.equal(marketGroupIdOf(input({ market: 'CATEGORICAL', side: 'YES', teamSide: 'NONE' })), null);
});

test('outcome sets come from the market: a 3-way market is three-way even from its HOME row', () => {
  const groups = new MarketGroups();
  const soccer = groups.groupFor(input({ market: 'MONEYLINE_3_WAY', marketSubtype: 'MONEYLINE_3_WAY', side: 'HOME' }));
  assert.equal(groups.outcomes[soccer], OUTCOMES_HOME_DRAW_AWAY);
  assert.equal(groups.outcomes[groups.groupFor(input({ side: 'AWAY', line: 2.5 }))], OUTCOMES_HOME_AWAY);
  assert.equal(groups.outcomes[groups.groupFor(input({ side: 'OVER', market: 'TOTAL', line: 2.5 }))], OUTCOMES_OVER_UNDER);
  assert.equal(groups.lineOf(groups.groupFor(input({ side: 'AWAY', line: 2.5 }))), -2.5);
  assert.equal(groups.eventStartTime[soccer], '2026-11-21T15:00');
});

test('property: membership lists match a model through attach, detach, moves and group reuse', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('attach' as const), ref: fc.nat(60), line: fc.integer({ min: 0, max: 5 }) }),
    fc.record({ kind: fc.constant('detach' as const), ref: fc.nat(60) }),
  );
  fc.assert(fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
    const groups = new MarketGroups();
    const model = new Map<number, string>(); // ref -> group id
    for (const o of ops) {
      if (o.kind === 'attach') {
        const g = groups.groupFor(input({ line: -o.line - 0.5 }));
        groups.attach(o.ref, g);
        model.set(o.ref, groups.id[g]);
      } else {
        const g = groups.detach(o.ref);
        assert.equal(g === NONE ? undefined : groups.id[g], model.get(o.ref));
        model.delete(o.ref);
        if (g !== NONE && groups.memberCount(g) === 0) assert.ok(groups.releaseIfEmpty(g));
      }
    }
    const expected = new Map<string, number[]>();
    for (const [ref, id] of model) expected.set(id, [...(expected.get(id) ?? []), ref].sort((a, b) => a - b));
    for (let g = 0; g < groups.capacity; g++) {
      if (!groups.isLive(g)) continue;
      const members: number[] = [];
      for (let ref = groups.firstMember(g); ref !== NONE; ref = groups.nextMember(ref)) members.push(ref);
      assert.equal(members.length, groups.memberCount(g));
      assert.deepEqual(members.sort((a, b) => a - b), expected.get(groups.id[g]) ?? []);
      for (const ref of members) assert.equal(groups.groupOf(ref), g);
    }
    assert.equal(groups.indexOf('nope'), NONE);
  }), { numRuns: 300 });
});
