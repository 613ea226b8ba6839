// Routing, methods, CORS, HEAD, 404/405/OPTIONS and the 500 path, over a real server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { defineRoute } from '../../http/router.ts';
import { notFound } from '../../http/errors.ts';
import { startTestServer, httpRequest, type TestServer } from '../helpers/server.ts';

const TEAMS = [
  { id: 'nfl-kc', name: 'Kansas City Chiefs', abbreviation: 'KC', league: 'nfl' },
  { id: 'nfl-buf', name: 'Buffalo Bills', abbreviation: 'BUF', league: 'nfl' },
];
const UPDATED = Date.UTC(2026, 10, 21, 12, 0, 0, 123);

const teams = defineRoute({
  path: '/api/v1/teams',
  auth: 'none',
  query: [],
  response: 'Team',
  handle: () => ({ kind: 'data', data: TEAMS, updated: UPDATED }),
});
const team = defineRoute({
  path: '/api/v1/teams/:teamId',
  auth: 'none',
  query: [],
  response: 'Team',
  handle(req) {
    const found = TEAMS.find((t) => t.id === req.params.teamId);
    if (found === undefined) throw notFound(`no team ${req.params.teamId}`);
    return { kind: 'data', data: [found], updated: UPDATED };
  },
});
// A literal segment next to a parameter: literal wins, parameter still matches the rest.
const teamsActive = defineRoute({
  path: '/api/v1/teams/active',
  auth: 'none',
  query: [],
  response: 'Team',
  handle: () => ({ kind: 'data', data: TEAMS.slice(0, 1), updated: UPDATED }),
});
const teamStats = defineRoute({
  path: '/api/v1/teams/:teamId/stats',
  auth: 'key',
  query: [],
  response: 'Status',
  handle: (req) => ({ kind: 'data', data: [{ totalMarkets: req.params.teamId!.length, sportsbooks: 1 }], updated: UPDATED }),
});
let boomCount = 0;
const boom = defineRoute({
  path: '/api/v1/boom',
  auth: 'none',
  query: [],
  response: 'Status',
  handle() {
    boomCount++;
    throw new TypeError('the engine fell over');
  },
});

describe('http routing and methods', () => {
  let t: TestServer;
  const logged: string[] = [];
  before(async () => {
    t = await startTestServer({ routes: [teams, teamsActive, team, teamStats, boom], log: (line) => logged.push(line) });
  });
  after(() => t.close());

  it('matches literal paths and answers the envelope with CORS and JSON headers', async () => {
    const { reply, body } = await t.call('/api/v1/teams', '/api/v1/teams');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(reply.headers['access-control-allow-origin'], '*');
    assert.match(String(reply.headers['access-control-expose-headers']), /ETag.*X-RateLimit-Limit.*X-RateLimit-Remaining.*X-RateLimit-Reset.*Retry-After/);
    assert.equal(reply.headers.vary, 'Accept, Accept-Encoding');
    assert.equal(reply.headers['cache-control'], 'no-cache');
    assert.match(String(reply.headers.etag), /^"[A-Za-z0-9_-]+"$/);
    assert.deepEqual(body, { success: true, data: TEAMS, nextCursor: null, meta: { count: 2, updated: '2026-11-21T12:00:00.123Z' } });
    // the constant headers go out as one prebuilt block: each must still arrive as its own header
    const again = await httpRequest(t.port, '/api/v1/teams', { headers: { 'If-None-Match': String(reply.headers.etag) } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.etag, reply.headers.etag);
    for (const name of ['vary', 'cache-control', 'access-control-allow-origin', 'access-control-expose-headers']) {
      assert.equal(again.headers[name], reply.headers[name], name);
    }
    assert.equal(again.body.length, 0);
  });

  it('extracts and decodes path parameters; literal segments win over parameters', async () => {
    const one = await t.call('/api/v1/teams/:teamId', '/api/v1/teams/nfl-buf');
    assert.equal(one.body.data[0].name, 'Buffalo Bills');
    const active = await t.call('/api/v1/teams/active', '/api/v1/teams/active');
    assert.equal(active.body.data.length, 1);
    const stats = await t.call('/api/v1/teams/:teamId/stats', '/api/v1/teams/a%20b/stats');
    assert.equal(stats.body.data[0].totalMarkets, 3, 'a%20b decodes to "a b"');
    const trailing = await t.call('/api/v1/teams', '/api/v1/teams/');
    assert.equal(trailing.reply.status, 200, 'one trailing slash is ignored');
  });

  it('answers 404 not_found for unknown paths and unknown ids', async () => {
    for (const path of ['/', '/api/v1', '/api/v1/nope', '/api/v1/teams/nfl-kc/odds/extra', '/api/v1/teams//stats', '/api/v2/teams']) {
      const { reply, body } = await t.call('/api/v1/teams', path);
      assert.equal(reply.status, 404, path);
      assert.equal(body.code, 'not_found');
      assert.equal(body.success, false);
      assert.equal(body.param, null);
      assert.equal(reply.headers['access-control-allow-origin'], '*');
    }
    const { reply, body } = await t.call('/api/v1/teams/:teamId', '/api/v1/teams/nfl-xx');
    assert.equal(reply.status, 404);
    assert.equal(body.detail, 'no team nfl-xx');
  });

  it('answers 405 method_not_allowed with Allow for other methods', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const { reply, body } = await t.call('/api/v1/teams', '/api/v1/teams', { method });
      assert.equal(reply.status, 405, method);
      assert.equal(reply.headers.allow, 'GET, HEAD, OPTIONS');
      assert.equal(body.code, 'method_not_allowed');
      assert.equal(reply.headers['access-control-allow-origin'], '*');
    }
  });

  it('answers OPTIONS with a 204 preflight', async () => {
    const reply = await httpRequest(t.port, '/api/v1/teams', { method: 'OPTIONS', headers: { Origin: 'https://example.com', 'Access-Control-Request-Method': 'GET' } });
    assert.equal(reply.status, 204);
    assert.equal(reply.body.length, 0);
    assert.equal(reply.headers['content-length'], undefined, '204 carries no Content-Length');
    assert.equal(reply.headers['access-control-allow-origin'], '*');
    assert.equal(reply.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
    assert.match(String(reply.headers['access-control-allow-headers']), /X-Api-Key.*Authorization.*If-None-Match/);
  });

  it('answers HEAD with the GET headers and no body', async () => {
    const get = await httpRequest(t.port, '/api/v1/teams');
    const head = await t.call('/api/v1/teams', '/api/v1/teams', { method: 'HEAD' });
    assert.equal(head.reply.status, 200);
    assert.equal(head.reply.headers['content-length'], String(get.body.length));
    assert.equal(head.reply.headers.etag, get.headers.etag);
    assert.equal(head.reply.headers['content-type'], get.headers['content-type']);
    const missing = await t.call('/api/v1/teams', '/api/v1/nope', { method: 'HEAD' });
    assert.equal(missing.reply.status, 404);
  });

  it('keeps HTTP framing intact for HEAD on a keep-alive connection', async () => {
    const raw = await rawExchange(t.port, 'HEAD /api/v1/teams HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/teams/nfl-kc HTTP/1.1\r\nHost: x\r\n\r\n', 2);
    const responses = raw.split('HTTP/1.1 ').filter((part) => part !== '');
    assert.equal(responses.length, 2, raw);
    assert.ok(responses[0]!.endsWith('\r\n\r\n'), 'HEAD response ends after its headers');
    assert.ok(responses[1]!.includes('"Kansas City Chiefs"'));
  });

  it('turns an exception into 500 internal_error with a request id, logs it, and keeps serving', async () => {
    for (let i = 0; i < 3; i++) {
      const { reply, body } = await t.call('/api/v1/boom', '/api/v1/boom?x=1');
      assert.equal(reply.status, 500);
      assert.equal(body.code, 'internal_error');
      const requestId = String(reply.headers['x-request-id']);
      assert.ok(body.detail.includes(requestId), body.detail);
      assert.ok(logged.some((line) => line.includes(requestId) && line.includes('the engine fell over') && line.includes('/api/v1/boom?x=1')));
    }
    assert.equal(boomCount, 3);
    const { reply } = await t.call('/api/v1/teams', '/api/v1/teams');
    assert.equal(reply.status, 200);
  });

  it('serves the OpenAPI document describing every route', async () => {
    const { body } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    assert.equal(body.openapi, '3.1.0');
    assert.equal(body.info.version, '1.0.0');
    for (const path of ['/api/v1/teams', '/api/v1/teams/{teamId}', '/api/v1/teams/{teamId}/stats', '/api/v1/openapi.json']) {
      assert.ok(body.paths[path]?.get, path);
    }
    assert.equal(body.paths['/api/v1/teams/{teamId}/stats'].get['x-auth-designation'], 'key');
    assert.equal(body.paths['/api/v1/teams/{teamId}'].get.parameters[0].in, 'path');
  });
});

/** Writes raw bytes on one connection and collects the text until `responses` status lines came back. */
function rawExchange(port: number, text: string, responses: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(received);
    }, 10_000); // a safety net only: a complete exchange resolves at once
    socket.on('data', (data) => {
      received += data.toString('latin1');
      const done = received.split('HTTP/1.1 ').length - 1 >= responses && /"\}\]/.test(received.slice(received.lastIndexOf('HTTP/1.1 ')));
      if (done) {
        clearTimeout(timer);
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', reject);
  });
}
