// GET /api/v1/snapshot on the real app (small board, ManualClock, port 0): gzip always,
// the OpenAPI Snapshot schema, byte equality with the reference serializer, rows equal to a
// full /odds walk, strong ETags per variant with 304, HEAD, curl --compressed, and a
// client that hangs up mid-body.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { ManualClock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { startApp, type App } from '../../service/app.ts';
import { bodyStreamStats } from '../../http/largeBody.ts';
import { httpRequest, loadValidator, type ApiValidator } from '../helpers/server.ts';
import { liveSlots } from '../helpers/engine-helpers.ts';
import { NOW, fixtureEngine, referenceText, type SnapshotDoc } from '../helpers/snapshot-helpers.ts';
import { createServer } from '../../http/server.ts';
import { snapshotRoutes } from '../../http/routes/snapshot.ts';
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

const PATH = '/api/v1/snapshot';
let app: App;
let api: ApiValidator;
let dir: string;
const clock = new ManualClock(NOW);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'snapshot-http-'));
  app = await startApp({ clock, board: { seed: 2, size: 'small', now: NOW }, dbPath: join(dir, 'odds.db'), port: 0, log: () => {} });
  api = await loadValidator(app.port);
});

after(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const reply = await httpRequest(app.port, path, { headers, method });
  const body = api.check(PATH, reply, method) as SnapshotDoc | undefined;
  return { reply, body };
}

function changeOnePrice(): void {
  clock.advance(1000);
  const slot = liveSlots(app.engine).find((s) => app.engine.store.priceAmerican[s] !== 0)!;
  const price = app.engine.store.priceAmerican[slot];
  app.engine.apply([{ op: 'price', slot, priceAmerican: price === 150 ? 155 : 150, suspended: false }]);
}

test('200: gzip (without asking), JSON, strong ETag, the snapshot document byte for byte, valid against the OpenAPI Snapshot schema', async () => {
  const { reply, body } = await get(PATH);
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['content-encoding'], 'gzip');
  assert.match(String(reply.headers['content-type']), /^application\/json/);
  assert.match(String(reply.headers.etag), /^"snap-n-[0-9a-f]+-[0-9a-f]+"$/);
  assert.equal(reply.headers['access-control-allow-origin'], '*');
  assert.equal(gunzipSync(reply.body).toString('utf8'), referenceText(app.engine, false));
  assert.equal(body!.count, app.engine.liveRows);
  const history = await get(`${PATH}?include_history=true`);
  assert.equal(gunzipSync(history.reply.body).toString('utf8'), referenceText(app.engine, true));
  assert.notEqual(history.reply.headers.etag, reply.headers.etag);
  assert.match(String(history.reply.headers.etag), /^"snap-h-/);
});

test('rows equal the rows of a full /odds walk (odds_format=all), same ids, same bytes', async () => {
  const { body } = await get(PATH);
  const walked = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const reply = await httpRequest(app.port, `/api/v1/odds?limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.equal(reply.status, 200);
    const page = api.check('/api/v1/odds', reply) as { data: Record<string, unknown>[]; nextCursor: string | null };
    for (const row of page.data) walked.set(row.id as string, JSON.stringify(row));
    cursor = page.nextCursor;
  } while (cursor !== null);
  let rows = 0;
  for (const event of body!.events) {
    for (const { priceHistory, ...row } of event.odds) {
      assert.equal(priceHistory, null);
      assert.equal(JSON.stringify(row), walked.get(row.id as string), `row ${row.id}`);
      rows++;
    }
  }
  assert.equal(rows, walked.size);
});

test('If-None-Match: 304 without a body per variant; the other variant\'s tag or a change gives 200', async () => {
  const plain = await get(PATH);
  const history = await get(`${PATH}?include_history=1`);
  const etag = String(plain.reply.headers.etag);
  const historyTag = String(history.reply.headers.etag);
  const again = await get(PATH, { 'If-None-Match': etag });
  assert.equal(again.reply.status, 304);
  assert.equal(again.reply.body.length, 0);
  assert.equal(again.reply.headers.etag, etag);
  assert.equal((await get(`${PATH}?include_history=true`, { 'If-None-Match': historyTag })).reply.status, 304);
  assert.equal((await get(`${PATH}?include_history=true`, { 'If-None-Match': etag })).reply.status, 200);
  assert.equal((await get(PATH, { 'If-None-Match': `W/${etag}` })).reply.status, 304, 'weak comparison (RFC 9110)');
  changeOnePrice();
  // A poll gets the newest complete version at once, so right after the change it may
  // still be the old one (304); the route promises the change within SNAPSHOT_MAX_AGE_MS.
  // Each variant is polled until its tag moves: the old tag must keep answering 304
  // until then, and the new body must be the board as it is now.
  const changed = await pollUntilChanged(PATH, etag);
  assert.notEqual(changed.reply.headers.etag, etag);
  assert.equal(gunzipSync(changed.reply.body).toString('utf8'), referenceText(app.engine, false));
  const changedHistory = await pollUntilChanged(`${PATH}?include_history=true`, historyTag);
  assert.equal(gunzipSync(changedHistory.reply.body).toString('utf8'), referenceText(app.engine, true));
});

/** Conditional GETs with `etag` until one answers 200 (the route promises it within SNAPSHOT_MAX_AGE_MS, 2 s by default; 10 s leaves room for a loaded machine). */
async function pollUntilChanged(path: string, etag: string): Promise<Awaited<ReturnType<typeof get>>> {
  let last: Awaited<ReturnType<typeof get>> | null = null;
  const moved = await eventually(async () => {
    last = await get(path, { 'If-None-Match': etag });
    if (last.reply.status === 304) {
      assert.equal(last.reply.headers.etag, etag, 'a 304 carries the tag it matched');
      return false;
    }
    assert.equal(last.reply.status, 200);
    return true;
  }, 10_000, 20);
  assert.ok(moved, `${path} still answered 304 for ${etag} 10 s after a change`);
  return last!;
}

test('HEAD: the same headers and Content-Length, no body', async () => {
  const full = await get(PATH);
  const head = await get(PATH, {}, 'HEAD');
  assert.equal(head.reply.status, 200);
  assert.equal(head.reply.body.length, 0);
  assert.equal(head.reply.headers.etag, full.reply.headers.etag);
  assert.equal(head.reply.headers['content-encoding'], 'gzip');
  assert.equal(Number(head.reply.headers['content-length']), full.reply.body.length);
});

test('include_history must be a boolean (400 invalid_parameter)', async () => {
  const { reply, body } = await get(`${PATH}?include_history=maybe`);
  assert.equal(reply.status, 400);
  assert.equal((body as unknown as { code: string }).code, 'invalid_parameter');
});

test('curl --compressed reads the body as the snapshot document', async () => {
  const run = promisify(execFile);
  await run('curl', ['--version']).catch(() => assert.fail('curl is required by this test (apt-get install curl)'));
  for (const query of ['', '?include_history=true']) {
    const { stdout } = await run('curl', ['-sS', '--fail', '--compressed', `http://127.0.0.1:${app.port}${PATH}${query}`], { maxBuffer: 256 * 1024 * 1024 });
    assert.equal(stdout, referenceText(app.engine, query !== ''));
  }
});

describe('on the medium board (bodies of tens of MB, builds of seconds)', () => {
  let server: Awaited<ReturnType<typeof createServer>>;
  let engine: OddsEngine;
  let mediumClock: ManualClock;
  let snapshot: BoardSnapshot;

  before(async () => {
    ({ engine, clock: mediumClock } = fixtureEngine(4, undefined, 'medium'));
    // As the composition root does: the variant without history is built before the server listens.
    snapshot = new BoardSnapshot(engine, { clock: engine.clock });
    snapshot.current(false);
    server = await createServer({ routes: snapshotRoutes({ snapshot }), port: 0, log: () => {} });
  });

  after(async () => {
    await server.close();
    snapshot.close();
  });

  test('a poll while the board has moved far is answered with the previous complete version; a later poll gets the new one', async () => {
    const first = await httpRequest(server.port, PATH);
    assert.equal(first.status, 200);
    const firstSeq = Number(first.headers['x-board-seq']);
    assert.equal(firstSeq, engine.seq);
    // Thousands of changes over most pieces: far more than a poll may finish inline.
    const sim = new Simulator(engine, mediumClock, { ratePerSecond: 10_000, seed: 17 });
    sim.step(30_000);
    const movedSeq = engine.seq;
    assert.ok(movedSeq > firstSeq);
    const during = await httpRequest(server.port, PATH);
    assert.equal(during.status, 200);
    assert.equal(during.headers.etag, first.headers.etag, 'the previous complete version, not one waited for');
    assert.equal(Number(during.headers['x-board-seq']), firstSeq);
    assert.ok(during.body.equals(first.body));
    // The poll started the next version in the background; polls see it once it is complete.
    let next = during;
    const caughtUp = await eventually(async () => {
      next = await httpRequest(server.port, PATH);
      return Number(next.headers['x-board-seq']) === movedSeq;
    }, 120_000);
    assert.ok(caughtUp, 'a later poll gets the version of the moved board');
    assert.notEqual(next.headers.etag, first.headers.etag);
    assert.equal(gunzipSync(next.body).toString('utf8'), referenceText(engine, false));
  });

  test('a first include_history request builds in steps: other requests are answered meanwhile', async () => {
    let historyDone = false;
    const history = httpRequest(server.port, `${PATH}?include_history=true`).then((reply) => {
      historyDone = true;
      return reply;
    });
    let answeredMeanwhile = 0;
    while (!historyDone) {
      const reply = await httpRequest(server.port, '/api/v1/openapi.json');
      assert.equal(reply.status, 200);
      if (!historyDone) answeredMeanwhile++;
    }
    assert.ok(answeredMeanwhile >= 3, `${answeredMeanwhile} requests answered during the build`);
    const reply = await history;
    assert.equal(reply.status, 200);
    assert.equal(gunzipSync(reply.body).toString('utf8'), referenceText(engine, true));
  });

  test('a client that hangs up mid-body costs nothing more; the next client gets the whole body', async () => {
    // A client that stops reading: the server waits on backpressure, then the client leaves.
    const size = (await httpRequest(server.port, `${PATH}?include_history=true`)).body.length;
    assert.ok(size > 8 * 1024 * 1024, `body of ${size} bytes`);
    const before = { ...bodyStreamStats };
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => socket.write(`GET ${PATH}?include_history=true HTTP/1.1\r\nHost: x\r\n\r\n`));
      socket.once('data', () => {
        socket.pause(); // stop reading: the kernel buffers fill, uWS waits in onWritable
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
      socket.on('error', reject);
    });
    await eventually(() => bodyStreamStats.aborted !== before.aborted);
    assert.equal(bodyStreamStats.started, before.started + 1);
    assert.ok(bodyStreamStats.waits > before.waits, 'the server waited for the socket instead of buffering a copy');
    assert.equal(bodyStreamStats.aborted, before.aborted + 1, 'the stream was dropped when the client left');
    assert.equal(bodyStreamStats.completed, before.completed);
    const again = await httpRequest(server.port, `${PATH}?include_history=true`);
    assert.equal(again.status, 200);
    assert.equal(again.body.length, size);
    assert.equal(gunzipSync(again.body).toString('utf8'), referenceText(engine, true));
  });

  test('a client that leaves while its request waits on a first build is dropped quietly', async () => {
    // A poll no longer waits on a backlog (it gets the newest complete version); the one
    // request that waits is the first of a variant not built yet: history, once dropped.
    mediumClock.advance(6 * 60_000); // past historyIdleMs without a history request
    assert.equal((await httpRequest(server.port, PATH)).status, 200); // drops the idle history variant
    const sim = new Simulator(engine, mediumClock, { ratePerSecond: 2000, seed: 8 });
    sim.step(6000);
    const before = { ...bodyStreamStats };
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => {
        socket.write(`GET ${PATH}?include_history=true HTTP/1.1\r\nHost: x\r\n\r\n`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 5);
      });
      socket.on('error', reject);
    });
    const reply = await httpRequest(server.port, `${PATH}?include_history=true`);
    assert.equal(reply.status, 200);
    assert.equal(gunzipSync(reply.body).toString('utf8'), referenceText(engine, true));
    assert.equal(bodyStreamStats.started - before.started, 1, 'only the client that stayed got a body stream');
  });
});
