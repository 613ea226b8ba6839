// The OpenAPI document promises no less than the server does: every status an
// operation can answer is declared (checked against the live server's answers), and
// the parameter schemas are no looser than the server (an instant's pattern accepts
// exactly what the parser accepts, the price-history id pattern exactly the id form).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseInstantParam } from '../../http/params.ts';
import { ISO_INSTANT_PATTERN } from '../../http/schemas.ts';
import { oddsIdParts } from '../../engine/signals/selectionHistory.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { rawHttp } from '../helpers/rawHttp.ts';

type Operation = { parameters: { name: string; in: string; schema: { pattern?: string } }[]; responses: Record<string, unknown> };
type Doc = { paths: Record<string, { get: Operation }> };

const INSTANT = new RegExp(ISO_INSTANT_PATTERN);

/** Text a client might send as an instant: near-misses of every part of the grammar. */
const instantText = fc.oneof(
  fc.tuple(
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 }),
    fc.option(fc.tuple(fc.constantFrom('T', ' ', 't'), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.option(fc.integer({ min: 0, max: 61 })), fc.option(fc.stringMatching(/^\d{1,10}$/)))),
    fc.option(fc.constantFrom('Z', 'z', '+01:00', '-05:30', '+2359', '+24:00', '-00:60', '+0530', 'UTC', '+1')),
  ).map(([y, mo, d, time, zone]) => {
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    let text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}`;
    if (time !== null) {
      const [sep, h, mi, s, frac] = time;
      text += `${sep}${pad(h)}:${pad(mi)}`;
      if (s !== null) text += `:${pad(s)}${frac === null ? '' : `.${frac}`}`;
    }
    return zone === null ? text : text + zone;
  }),
  fc.stringMatching(/^\d{1,18}$/),
  fc.constantFrom('0000-00-00', '0000-02-29', '1900-02-29', '2000-02-29', '2024-02-29', '2026-02-29', '2026-02-30', '2026-04-31', '2026-12-31T23:59:59.999999999Z', '1e3', '-1', ''),
  fc.string({ maxLength: 30 }),
);

describe('the OpenAPI document and the server agree', () => {
  let t: TestApp;
  let doc: Doc;
  before(async () => {
    t = await startTestApp();
    doc = JSON.parse((await t.request('/api/v1/openapi.json')).body.toString('utf8')) as Doc;
  });
  after(() => t.close());

  it('the instant pattern accepts exactly the text the parser accepts (since, date, from, to)', () => {
    fc.assert(
      fc.property(instantText, (text) => {
        assert.equal(INSTANT.test(text), parseInstantParam(text) !== null, JSON.stringify(text));
      }),
      { numRuns: 3000 },
    );
    const instantParams = Object.values(doc.paths).flatMap((path) => path.get.parameters.filter((p) => p.in === 'query' && p.schema.pattern === ISO_INSTANT_PATTERN).map((p) => p.name));
    for (const name of ['since', 'date']) assert.ok(instantParams.includes(name), `${name} carries the instant pattern`);
  });

  it("the price-history id pattern accepts exactly the server's id form", () => {
    const id = doc.paths['/api/v1/historical/price-history']!.get.parameters.find((p) => p.name === 'id')!;
    const pattern = new RegExp(id.schema.pattern!);
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', ':', '-', ' ', '1'), { maxLength: 12 }), (chars) => {
        const text = chars.join('');
        if (text === '') return;
        assert.equal(pattern.test(text), oddsIdParts(text) !== null, JSON.stringify(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('every operation declares 400, 405, 414, 431 and 505; /historical/odds and /historical/price-history declare 404', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const status of ['400', '405', '414', '431', '505']) assert.ok(status in item.get.responses, `${path} declares ${status}`);
    }
    for (const path of ['/api/v1/historical/odds', '/api/v1/historical/price-history']) assert.ok('404' in doc.paths[path]!.get.responses, `${path} declares 404`);
  });

  it('what the server answers on each path is declared there', async () => {
    for (const [template, item] of Object.entries(doc.paths)) {
      if (template.includes('{')) continue;
      const probes: [string, string][] = [
        ['405', `PROPFIND ${template} HTTP/1.1\r\nHost: x\r\n\r\n`],
        ['414', `GET ${template}?x=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
        ['431', `GET ${template} HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 120 }, (_, i) => `X-H${i}: 1\r\n`).join('')}\r\n`],
        ['400', `GET ${template} HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n`],
        ['505', `GET ${template} HTTP/2.0\r\nHost: x\r\n\r\n`],
      ];
      for (const [expected, bytes] of probes) {
        const reply = await rawHttp(t.port, bytes);
        assert.equal(String(reply.responses[0]?.status), expected, `${template}: ${bytes.slice(0, 40)}`);
        assert.ok(expected in item.get.responses, `${template} declares ${expected}`);
      }
    }
    const unknown = await t.request('/api/v1/historical/odds?event_id=no-such-event');
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.body.toString('utf8')).code, 'not_found');
    const noBook = await t.request('/api/v1/historical/price-history?id=no-such-event:b:c:d');
    assert.equal(noBook.status, 404);
    const malformed = await t.request('/api/v1/historical/price-history?id=a:b:c');
    assert.equal(malformed.status, 400);
    assert.equal(JSON.parse(malformed.body.toString('utf8')).param, 'id');
  });
});
