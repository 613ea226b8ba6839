// The envelope writer: rendered rows are embedded byte for byte; meta is complete.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { envelopeFromData, envelopeFromRows } from '../../http/envelope.ts';
import { isoMillis } from '../../engine/timeFormat.ts';
import { defineRoute } from '../../http/router.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const UPDATED = Date.UTC(2026, 10, 21, 18, 4, 5, 123);

describe('envelope writer', () => {
  it('wraps pre-rendered rows without touching their bytes', () => {
    const rows = Buffer.from('{"a":1},{"b":"x,y"}');
    const body = envelopeFromRows(rows, { count: 2, updated: UPDATED, nextCursor: 'abc_-', note: 'nfl has no "active" season', warnings: ["unknown query parameter 'q' ignored"] });
    assert.deepEqual(JSON.parse(body.toString()), {
      success: true,
      data: [{ a: 1 }, { b: 'x,y' }],
      nextCursor: 'abc_-',
      meta: { count: 2, updated: '2026-11-21T18:04:05.123Z', note: 'nfl has no "active" season', warnings: ["unknown query parameter 'q' ignored"] },
    });
    assert.ok(body.includes(rows), 'row bytes appear verbatim');
  });

  it('writes an empty page, null cursor, and omits absent note and warnings', () => {
    const body = envelopeFromRows(Buffer.alloc(0), { count: 0, updated: UPDATED, warnings: [] });
    assert.equal(body.toString(), '{"success":true,"data":[],"nextCursor":null,"meta":{"count":0,"updated":"2026-11-21T18:04:05.123Z"}}');
  });

  it('matches JSON.stringify of the same envelope for any rows (property)', () => {
    const row = fc.record({ id: fc.string(), price: fc.integer(), line: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 20 }), fc.option(fc.string(), { nil: null }), fc.option(fc.string(), { nil: undefined }), (data, cursor, note) => {
        const rows = Buffer.from(data.map((r) => JSON.stringify(r)).join(','));
        const viaRows = envelopeFromRows(rows, { count: data.length, updated: UPDATED, nextCursor: cursor, note });
        const viaData = envelopeFromData(data, { updated: UPDATED, nextCursor: cursor, note });
        const expected = JSON.stringify({ success: true, data, nextCursor: cursor, meta: { count: data.length, updated: isoMillis(UPDATED), ...(note !== undefined && { note }) } });
        assert.equal(viaRows.toString(), expected);
        assert.equal(viaData.toString(), expected);
      }),
    );
  });
});

const rowsRoute = defineRoute({
  path: '/api/v1/leagues',
  auth: 'none',
  response: 'League',
  query: [{ name: 'year', kind: 'integer' }],
  handle: () => ({ kind: 'rows', rows: Buffer.from('"nfl","nba"'), count: 2, updated: UPDATED, note: 'mlb has no active season; active leagues: nfl, nba' }),
});

describe('envelope over HTTP', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ routes: [rowsRoute] });
  });
  after(() => t.close());

  it('adds the request warnings and the route note to the envelope', async () => {
    const { body } = await t.call('/api/v1/leagues', '/api/v1/leagues?yaer=2026');
    assert.deepEqual(body, {
      success: true,
      data: ['nfl', 'nba'],
      nextCursor: null,
      meta: { count: 2, updated: '2026-11-21T18:04:05.123Z', note: 'mlb has no active season; active leagues: nfl, nba', warnings: ["unknown query parameter 'yaer' ignored"] },
    });
  });
});
