// /api/v1/status: live odds rows and sources
// with live rows, consistent with /odds and the board as it moves; needs no key;
// meta.updated is the board's as-of time; ETag/304 follow the body.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

const ROUTE = '/api/v1/status';
let t: TestApp;

function expected(): { totalMarkets: number; sportsbooks: number } {
  const rows = boardRows(t.app.engine, 'all');
  return { totalMarkets: rows.length, sportsbooks: new Set(rows.map((r) => r.sportsbook)).size };
}

describe('/status', () => {
  before(async () => {
    t = await startTestApp({ env: { REQUIRE_KEY: '1' } });
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('counts live rows (suspended included) and sources with live rows; no key needed even with REQUIRE_KEY=1', async () => {
    const { reply, body } = await t.call(ROUTE, ROUTE);
    assert.equal(reply.status, 200);
    assert.deepEqual(body.data, [expected()]);
    assert.equal(body.meta.count, 1);
    assert.equal(body.meta.updated, new Date(t.app.engine.asOf()).toISOString());
    assert.ok(boardRows(t.app.engine, 'all').some((r) => r.suspended), 'the board has suspended rows, and they count');
    const odds = await t.request('/api/v1/odds?limit=1');
    assert.equal(odds.status, 401, 'a key-designated route next to it does need the key');
  });

  it('follows the board: removals, a finished game, and simulator ticks', async () => {
    const engine = t.app.engine;
    const before = expected();
    const first = await t.call(ROUTE, ROUTE);
    const victim = boardRows(engine, 'all')[0]!;
    t.clock.advance(1000);
    engine.apply([{ op: 'remove', id: victim.id }]);
    const afterRemove = await t.call(ROUTE, ROUTE, { headers: { 'If-None-Match': first.reply.headers.etag! } });
    assert.equal(afterRemove.reply.status, 200);
    assert.equal(afterRemove.body.data[0].totalMarkets, before.totalMarkets - 1);
    assert.equal(afterRemove.body.meta.updated, new Date(t.clock.now()).toISOString());
    const live = engine.eventIdsWithLiveRows().find((id) => engine.event(id)!.status === 'in_progress')!;
    t.clock.advance(1000);
    engine.apply([{ op: 'status', eventId: live, status: 'final' }]);
    t.app.simulator.step(300);
    const { body } = await t.call(ROUTE, ROUTE);
    assert.deepEqual(body.data, [expected()]);
    assert.ok(body.data[0].totalMarkets < before.totalMarkets - 1);
  });

  it('304 while the board stands still; a change answers the new body', async () => {
    const first = await t.call(ROUTE, ROUTE);
    t.clock.advance(60_000);
    const still = await t.call(ROUTE, ROUTE, { headers: { 'If-None-Match': first.reply.headers.etag! } });
    assert.equal(still.reply.status, 304);
    assert.equal(still.reply.body.length, 0);
    t.app.simulator.step(5);
    const moved = await t.call(ROUTE, ROUTE, { headers: { 'If-None-Match': first.reply.headers.etag! } });
    assert.equal(moved.reply.status, 200);
    assert.notEqual(moved.body.meta.updated, first.body.meta.updated);
  });

  it('is listed in the OpenAPI document with the Status schema and no key designation', async () => {
    const { body } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    const op = body.paths['/api/v1/status'].get;
    assert.equal(op['x-auth-designation'], 'none');
    assert.deepEqual(op.responses['200'].content['application/json'].schema.properties.data.items, { $ref: '#/components/schemas/Status' });
    for (const path of ['/api/v1/odds', '/api/v1/odds/updated', '/api/v1/events/{eventId}/odds', '/api/v1/players/{playerId}/odds', '/api/v1/teams/{teamId}/odds']) {
      assert.ok(body.paths[path]?.get, `${path} is documented`);
      assert.equal(body.paths[path].get['x-auth-designation'], 'key');
    }
  });
});

describe('npm start (service/main.ts)', () => {
  it('prints a ready line, answers /status on the printed port, and exits 0 on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odds-main-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', BOARD: 'small', NOW: '2026-11-21T12:00:00Z', SIM_RATE: '500', DB_PATH: join(dir, 'odds.db'), DATA_DIR: join(dir, 'data'), INGEST_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ready line: ${output}`)), 20_000);
        child.stdout.on('data', () => {
          const match = /small board \(seed 42, [\d,]+ live rows\) ready in [\d.]+s: live board http:\/\/127\.0\.0\.1:(\d+)\/, API reference http:\/\/127\.0\.0\.1:\d+\/docs, API http:\/\/127\.0\.0\.1:\d+\/api\/v1;/.exec(output);
          if (match !== null) {
            clearTimeout(timer);
            resolve(Number(match[1]));
          }
        });
      });
      const first = await fetch(`http://127.0.0.1:${port}/api/v1/status`).then((r) => r.json());
      assert.ok(first.data[0].totalMarkets > 1000);
      const moved = await eventually(async () => {
        const second = await fetch(`http://127.0.0.1:${port}/api/v1/status`).then((r) => r.json());
        return second.meta.updated > first.meta.updated;
      }, 5000, 50);
      assert.ok(moved, 'the simulator moves the board (and the frozen clock)');
      const started = Date.now();
      child.kill('SIGINT');
      assert.equal(await exited, 0, output);
      assert.ok(Date.now() - started < 5000);
      assert.match(output, /SIGINT: stopping/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
