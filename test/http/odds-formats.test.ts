// is_main and odds_format over HTTP, on rows with
// hand-picked prices (so the expected answer is worked out here, not by a second
// implementation) and across the whole fixture board.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OddsInput } from '../../engine/model.ts';
import { startTestApp, NOW, type TestApp } from '../helpers/app.ts';
import { boardRows, type Row } from '../helpers/oddsReference.ts';

let t: TestApp;
const EVENT = 'nba-20261122-tst-fmt';
const ROUTE = '/api/v1/events/:eventId/odds';
const START = NOW + 6 * 3600_000;

function row(book: string, subtype: string, side: 'OVER' | 'UNDER' | 'HOME' | 'AWAY', line: number | null, price: number | null, extra: Partial<OddsInput> = {}): OddsInput {
  const lineText = line === null ? '' : `-${line}`;
  return {
    eventId: EVENT,
    sportsbook: book,
    league: 'nba',
    market: subtype.startsWith('PLAYER_') ? 'PLAYER_TOTAL' : subtype,
    marketSubtype: subtype,
    period: 'FULL',
    selectionId: `FULL-${side}${lineText}${extra.playerId ? `-${extra.playerId}` : ''}`,
    selection: `${side} ${line ?? ''}`.trim(),
    side,
    teamSide: side === 'HOME' || side === 'AWAY' ? side : 'NONE',
    teamName: 'Test',
    priceAmerican: price,
    dfsMultiplier: null,
    line,
    playerId: null,
    playerName: null,
    teamId: null,
    suspended: false,
    eventStartTime: START,
    updated: NOW,
    marketScope: null,
    segment: null,
    ...extra,
  };
}

function upsert(rows: OddsInput[]): void {
  t.clock.advance(1000);
  const result = t.app.engine.apply(rows.map((r) => ({ op: 'upsert' as const, row: r })));
  assert.equal(result.applied, rows.length);
}

async function eventRows(query = ''): Promise<Row[]> {
  const { reply, body } = await t.call(ROUTE, `/api/v1/events/${EVENT}/odds${query}`);
  assert.equal(reply.status, 200, reply.body.toString());
  return body.data;
}

const lines = (rows: Row[], book: string, subtype: string) =>
  [...new Set(rows.filter((r) => r.sportsbook === book && r.marketSubtype === subtype && r.line !== undefined).map((r) => r.line))].sort((a, b) => a - b);

describe('is_main and odds_format', () => {
  before(async () => {
    t = await startTestApp();
    upsert([
      // A ladder: 45.5 is the most balanced (-110/-110).
      row('pinnacle', 'TOTAL', 'OVER', 44.5, -150), row('pinnacle', 'TOTAL', 'UNDER', 44.5, 130),
      row('pinnacle', 'TOTAL', 'OVER', 45.5, -110), row('pinnacle', 'TOTAL', 'UNDER', 45.5, -110),
      row('pinnacle', 'TOTAL', 'OVER', 46.5, 120), row('pinnacle', 'TOTAL', 'UNDER', 46.5, -140),
      // A one-sided alternate passes through.
      row('pinnacle', 'TOTAL', 'OVER', 50.5, 300),
      // Another book's ladder is its own group: a tie between 210.5 and 211.5 keeps the lower line.
      row('fanduel', 'TOTAL', 'OVER', 210.5, 100), row('fanduel', 'TOTAL', 'UNDER', 210.5, -120),
      row('fanduel', 'TOTAL', 'OVER', 211.5, -120), row('fanduel', 'TOTAL', 'UNDER', 211.5, 100),
      row('fanduel', 'TOTAL', 'OVER', 212.5, 140), row('fanduel', 'TOTAL', 'UNDER', 212.5, -170),
      // Player props group per player.
      row('draftkings', 'PLAYER_TOTAL_POINTS', 'OVER', 20.5, -105, { playerId: 'p-a', playerName: 'A' }),
      row('draftkings', 'PLAYER_TOTAL_POINTS', 'UNDER', 20.5, -115, { playerId: 'p-a', playerName: 'A' }),
      row('draftkings', 'PLAYER_TOTAL_POINTS', 'OVER', 22.5, 130, { playerId: 'p-a', playerName: 'A' }),
      row('draftkings', 'PLAYER_TOTAL_POINTS', 'UNDER', 22.5, -160, { playerId: 'p-a', playerName: 'A' }),
      row('draftkings', 'PLAYER_TOTAL_POINTS', 'OVER', 30.5, 110, { playerId: 'p-b', playerName: 'B' }),
      row('draftkings', 'PLAYER_TOTAL_POINTS', 'UNDER', 30.5, -130, { playerId: 'p-b', playerName: 'B' }),
      // DFS pick'em rows and spreads pass through.
      row('prizepicks', 'PLAYER_TOTAL_POINTS', 'OVER', 21.5, null, { playerId: 'p-a', playerName: 'A', dfsMultiplier: 1 }),
      row('prizepicks', 'PLAYER_TOTAL_POINTS', 'OVER', 23.5, null, { playerId: 'p-a', playerName: 'A', dfsMultiplier: 1.5 }),
      row('pinnacle', 'SPREAD', 'HOME', -3.5, 150), row('pinnacle', 'SPREAD', 'AWAY', 3.5, -170),
      row('pinnacle', 'SPREAD', 'HOME', -1.5, -110), row('pinnacle', 'SPREAD', 'AWAY', 1.5, -110),
      row('pinnacle', 'MONEYLINE', 'HOME', null, -200), row('pinnacle', 'MONEYLINE', 'AWAY', null, 100),
    ]);
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('is_main keeps the most balanced line per (book, subtype, period, player); ties keep the lower line; everything else passes', async () => {
    const all = await eventRows();
    const main = await eventRows('?is_main=true');
    assert.deepEqual(lines(main, 'pinnacle', 'TOTAL'), [45.5, 50.5]);
    assert.deepEqual(lines(main, 'fanduel', 'TOTAL'), [210.5]);
    const props = main.filter((r) => r.sportsbook === 'draftkings');
    assert.deepEqual(props.map((r) => `${r.playerId}:${r.line}:${r.side}`).sort(), ['p-a:20.5:OVER', 'p-a:20.5:UNDER', 'p-b:30.5:OVER', 'p-b:30.5:UNDER']);
    assert.equal(main.filter((r) => r.sportsbook === 'prizepicks').length, 2, 'DFS rows pass');
    assert.equal(main.filter((r) => r.marketSubtype === 'SPREAD').length, 4, 'spreads pass');
    assert.equal(main.filter((r) => r.market === 'MONEYLINE').length, 2);
    assert.equal(all.length - main.length, 4 + 4 + 2);
  });

  it('is_main follows the prices: when another line becomes the most balanced, it takes over (and the ETag moves)', async () => {
    const before = await t.call(ROUTE, `/api/v1/events/${EVENT}/odds?is_main=true`);
    upsert([row('pinnacle', 'TOTAL', 'OVER', 45.5, -160), row('pinnacle', 'TOTAL', 'UNDER', 45.5, 135), row('pinnacle', 'TOTAL', 'OVER', 46.5, -105), row('pinnacle', 'TOTAL', 'UNDER', 46.5, -115)]);
    const after = await t.call(ROUTE, `/api/v1/events/${EVENT}/odds?is_main=true`, { headers: { 'If-None-Match': before.reply.headers.etag! } });
    assert.equal(after.reply.status, 200);
    assert.deepEqual(lines(after.body.data, 'pinnacle', 'TOTAL'), [46.5, 50.5]);
    const viaOdds = await t.call('/api/v1/odds', `/api/v1/odds?event_id=${EVENT}&sportsbook=pinnacle&market=total&is_main=1`);
    assert.deepEqual(viaOdds.body.data, after.body.data.filter((r: Row) => r.sportsbook === 'pinnacle' && r.market === 'TOTAL'));
  });

  it('probability: 1/decimal to 4 places replaces both price fields; american and decimal keep one field', async () => {
    const byId = async (format: string) => new Map((await eventRows(`?odds_format=${format}`)).map((r) => [r.id, r]));
    const [all, probability, american, decimal] = await Promise.all(['all', 'probability', 'american', 'decimal'].map(byId));
    const expected: Record<number, [number, number]> = { [-110]: [1.9091, 0.5238], 150: [2.5, 0.4], [-200]: [1.5, 0.6667], 100: [2, 0.5], [-170]: [1.5882, 0.6296], 300: [4, 0.25] };
    let checked = 0;
    for (const [id, full] of all!) {
      const p = probability!.get(id)!;
      const a = american!.get(id)!;
      const d = decimal!.get(id)!;
      if (full.dfsMultiplier !== undefined) {
        for (const r of [p, a, d]) assert.ok(r.priceAmerican === undefined && r.priceDecimal === undefined && r.priceProbability === undefined && r.dfsMultiplier === full.dfsMultiplier);
        continue;
      }
      assert.deepEqual(Object.keys(p).filter((k) => k.startsWith('price')), ['priceProbability']);
      assert.deepEqual(Object.keys(a).filter((k) => k.startsWith('price')), ['priceAmerican']);
      assert.deepEqual(Object.keys(d).filter((k) => k.startsWith('price')), ['priceDecimal']);
      assert.equal(a.priceAmerican, full.priceAmerican);
      assert.equal(d.priceDecimal, full.priceDecimal);
      const known = expected[full.priceAmerican];
      if (known !== undefined) {
        assert.equal(full.priceDecimal, known[0], `decimal of ${full.priceAmerican}`);
        assert.equal(p.priceProbability, known[1], `probability of ${full.priceAmerican}`);
        checked++;
      }
    }
    assert.ok(checked >= 10, `${checked} rows with hand-computed prices`);
  });

  it('probability math holds on every priced row of the board', async () => {
    const { body } = await t.call('/api/v1/odds', '/api/v1/odds?league=nba&odds_format=probability&limit=1000');
    const full = new Map(boardRows(t.app.engine, 'all').map((r) => [r.id, r]));
    let priced = 0;
    for (const r of body.data as Row[]) {
      const source = full.get(r.id)!;
      if (source.priceDecimal === undefined) continue;
      priced++;
      const decimal = source.priceAmerican > 0 ? 1 + source.priceAmerican / 100 : 1 + 100 / -source.priceAmerican;
      assert.equal(source.priceDecimal, Math.round(decimal * 1e4) / 1e4);
      assert.equal(r.priceProbability, Math.round(1e4 / source.priceDecimal) / 1e4, r.id);
      // Two roundings (decimal to 4 places, then 1/decimal to 4 places) stay within 1e-4 of 1/exact decimal.
      assert.ok(Math.abs(r.priceProbability - 1 / decimal) <= 0.0001 + 1e-12, `${r.id}: ${r.priceProbability} vs 1/${decimal}`);
      assert.equal(Math.round(r.priceProbability * 1e4) / 1e4, r.priceProbability, 'at most 4 decimal places');
    }
    assert.ok(priced > 500, `${priced} priced rows`);
  });
});
