// gzip and MessagePack variants: the same envelope, its own ETag, cached.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { unpack } from 'msgpackr';
import { defineRoute } from '../../http/router.ts';
import { COMMON_PARAMS } from '../../http/schemas.ts';
import { wantsGzip, wantsMsgpack } from '../../http/negotiate.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const PLAYERS = Array.from({ length: 40 }, (_, i) => ({ id: `p${i}`, name: `Player Number ${i}`, league: 'nba', teamId: `t${i % 8}`, position: i % 2 === 0 ? 'G' : 'F' }));
let builds = 0;

const players = defineRoute({
  path: '/api/v1/players',
  auth: 'none',
  response: 'Player',
  query: [COMMON_PARAMS.limit],
  cache: { validity: () => 1 },
  handle(req) {
    builds++;
    return { kind: 'data', data: PLAYERS.slice(0, req.query.limit), updated: Date.UTC(2026, 10, 21) };
  },
});
const uncached = defineRoute({
  path: '/api/v1/players/:playerId',
  auth: 'none',
  response: 'Player',
  query: [],
  handle: (req) => ({ kind: 'data', data: PLAYERS.filter((p) => p.id === req.params.playerId), updated: 0 }),
});

describe('content negotiation', () => {
  let t: TestServer;
  const route = '/api/v1/players';
  before(async () => {
    t = await startTestServer({ routes: [players, uncached] });
  });
  after(() => t.close());

  it('gzips bodies over 1 KiB for Accept-Encoding: gzip, with a -gz ETag', async () => {
    const plain = await t.call(route, route);
    assert.ok(plain.reply.body.length > 1024);
    const gz = await t.call(route, route, { headers: { 'Accept-Encoding': 'gzip, deflate, br' } });
    assert.equal(gz.reply.headers['content-encoding'], 'gzip');
    assert.equal(gz.reply.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(gz.reply.headers.vary, 'Accept, Accept-Encoding');
    assert.ok(gz.reply.body.length < plain.reply.body.length);
    assert.deepEqual(gunzipSync(gz.reply.body), plain.reply.body);
    assert.equal(gz.reply.headers.etag, `${String(plain.reply.headers.etag).slice(0, -1)}-gz"`);
    const notModified = await t.call(route, route, { headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': String(gz.reply.headers.etag) } });
    assert.equal(notModified.reply.status, 304);
    const otherVariant = await t.call(route, route, { headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': String(plain.reply.headers.etag) } });
    assert.equal(otherVariant.reply.status, 200, 'the identity ETag does not validate the gzip variant');
  });

  it('does not gzip small bodies or refused encodings', async () => {
    const small = await t.call(route, `${route}?limit=2`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.ok(small.reply.body.length <= 1024);
    assert.equal(small.reply.headers['content-encoding'], undefined);
    const refused = await t.call(route, route, { headers: { 'Accept-Encoding': 'gzip;q=0, identity' } });
    assert.equal(refused.reply.headers['content-encoding'], undefined);
  });

  it('answers MessagePack for Accept: application/msgpack, with a -mp ETag', async () => {
    const plain = await t.call(route, route);
    const mp = await t.call(route, route, { headers: { Accept: 'application/msgpack' } });
    assert.equal(mp.reply.headers['content-type'], 'application/msgpack');
    assert.deepEqual(unpack(mp.reply.body), JSON.parse(plain.reply.body.toString()));
    assert.equal(mp.reply.headers.etag, `${String(plain.reply.headers.etag).slice(0, -1)}-mp"`);
    const both = await t.call(route, route, { headers: { Accept: 'application/msgpack', 'Accept-Encoding': 'gzip' } });
    assert.equal(both.reply.headers['content-encoding'], 'gzip');
    assert.equal(both.reply.headers.etag, `${String(plain.reply.headers.etag).slice(0, -1)}-mp-gz"`);
    assert.deepEqual(unpack(gunzipSync(both.reply.body)), JSON.parse(plain.reply.body.toString()));
  });

  it('builds each variant once per body and reuses it', async () => {
    const cache = t.server.router.routes.find((r) => r.def.path === route)!.cache!;
    await t.call(route, `${route}?limit=30`, { headers: { Accept: 'application/msgpack', 'Accept-Encoding': 'gzip' } });
    const entry = cache.get(`${route}?limit=30`)!;
    const built = entry.bytes[3];
    assert.ok(built);
    await t.call(route, `${route}?limit=30`, { headers: { Accept: 'application/msgpack', 'Accept-Encoding': 'gzip' } });
    assert.equal(cache.get(`${route}?limit=30`)!.bytes[3], built, 'same Buffer served again');
    assert.equal(builds > 0, true);
  });

  it('negotiates on uncached routes too, and HEAD reports the variant length', async () => {
    const mp = await t.call('/api/v1/players/:playerId', '/api/v1/players/p3', { headers: { Accept: 'application/msgpack' } });
    assert.deepEqual((unpack(mp.reply.body) as { data: unknown[] }).data, [PLAYERS[3]]);
    const gz = await t.call(route, route, { headers: { 'Accept-Encoding': 'gzip' } });
    const head = await t.call(route, route, { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(head.reply.headers['content-length'], String(gz.reply.body.length));
    assert.equal(head.reply.headers['content-encoding'], 'gzip');
  });

  it('keeps errors as JSON whatever is asked', async () => {
    const { reply, body } = await t.call(route, `${route}?limit=0`, { headers: { Accept: 'application/msgpack', 'Accept-Encoding': 'gzip' } });
    assert.equal(reply.status, 400);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(body.code, 'invalid_parameter');
  });

  it('parses Accept and Accept-Encoding tokens', () => {
    assert.equal(wantsGzip('gzip'), true);
    assert.equal(wantsGzip('br, GZIP;q=0.5'), true);
    assert.equal(wantsGzip('gzip;q=0'), false);
    assert.equal(wantsGzip('gzip; q=0.0'), false);
    assert.equal(wantsGzip('deflate'), false);
    assert.equal(wantsGzip(''), false);
    assert.equal(wantsMsgpack('application/json, application/msgpack;q=0.9'), true);
    assert.equal(wantsMsgpack('application/x-msgpack'), true);
    assert.equal(wantsMsgpack('application/json'), false);
    assert.equal(wantsMsgpack('application/msgpack;q=0'), false);
  });
});
