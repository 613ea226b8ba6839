// The typed client against the real app. This file is type-checked by `npm test`
// (tsc) against client/schema.ts: it calls every route of the served document with its
// typed parameters and reads typed fields of each body, so a document change that the
// checked-in types do not follow fails the type-check (schema.test.ts fails too).
// At run time: every call answers 200, cursor iteration yields every row exactly once,
// ETag revalidation turns unchanged resources into 304s on the service, and
// client.sync() holds the same board as a fresh snapshot after the simulator ran.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OddsApiError, OddsClient, type OddsRow, type Snapshot } from '../../client/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { httpRequest } from '../helpers/server.ts';

/** Every path of the served document (typed: a path the types do not know is an error). */
const EVERY_PATH = [
  '/api/v1/account/usage',
  '/api/v1/arbitrage',
  '/api/v1/asyncapi.json',
  '/api/v1/best-prices',
  '/api/v1/edges',
  '/api/v1/ev',
  '/api/v1/events',
  '/api/v1/events/{eventId}',
  '/api/v1/events/{eventId}/odds',
  '/api/v1/events/{eventId}/stats',
  '/api/v1/events/active',
  '/api/v1/fair-lines',
  '/api/v1/historical/arbitrage',
  '/api/v1/historical/odds',
  '/api/v1/historical/price-history',
  '/api/v1/history/closing',
  '/api/v1/history/clv',
  '/api/v1/history/export',
  '/api/v1/history/market',
  '/api/v1/history/ticks',
  '/api/v1/leagues',
  '/api/v1/markets',
  '/api/v1/middles',
  '/api/v1/markets/active',
  '/api/v1/odds',
  '/api/v1/odds/updated',
  '/api/v1/openapi.json',
  '/api/v1/players',
  '/api/v1/players/{playerId}',
  '/api/v1/players/{playerId}/odds',
  '/api/v1/players/{playerId}/stats',
  '/api/v1/seasons',
  '/api/v1/snapshot',
  '/api/v1/sportsbooks',
  '/api/v1/stats/players',
  '/api/v1/status',
  '/api/v1/steam',
  '/api/v1/stream/signals',
  '/api/v1/stream/sse',
  '/api/v1/teams',
  '/api/v1/teams/{teamId}',
  '/api/v1/teams/{teamId}/odds',
  '/api/v1/teams/{teamId}/stats',
] as const satisfies readonly (keyof import('../../client/schema.ts').paths)[];

function rowsOfSnapshot(snapshot: Snapshot): Map<string, string> {
  const rows = new Map<string, string>();
  for (const event of snapshot.events) for (const { priceHistory: _history, ...row } of event.odds) rows.set(row.id, JSON.stringify(row));
  return rows;
}

describe('typed client', () => {
  let t: TestApp;
  let client: OddsClient;
  let archiveDir: string;
  before(async () => {
    // durable, with a tick archive: the history routes answer from it
    archiveDir = mkdtempSync(join(tmpdir(), 'odds-client-archive-'));
    t = await startTestApp({ dataDir: true, env: { ARCHIVE_DIR: archiveDir, ARCHIVE_INTERVAL_MS: '3600000' } });
    client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
  });
  after(async () => {
    await t.close();
    rmSync(archiveDir, { recursive: true, force: true });
  });

  it('calls every route of the document with typed parameters and typed bodies', async () => {
    const { api } = client;
    const seen = new Set<string>();
    const ok = <T>(path: string, reply: { data?: T; response: Response }): T => {
      assert.equal(reply.response.status, 200, path);
      assert.ok(reply.data !== undefined, path);
      seen.add(path);
      return reply.data;
    };
    const league = (await api.GET('/api/v1/odds', { params: { query: { limit: 1 } } })).data!.data[0]!.league;
    const odds = ok('/api/v1/odds', await api.GET('/api/v1/odds', { params: { query: { league: [league], limit: 5, odds_format: 'american' } } }));
    const row: OddsRow = odds.data[0]!;
    const playerRow = (await api.GET('/api/v1/odds', { params: { query: { limit: 1000 } } })).data!.data.find((r) => r.playerId !== undefined)!;
    const teams = ok('/api/v1/teams', await api.GET('/api/v1/teams', { params: { query: { league: [league] } } }));
    const teamId: string = teams.data[0]!.id;
    const weekAgo = new Date(t.clock.now() - 7 * 86_400_000).toISOString();
    const final = ok('/api/v1/events', await api.GET('/api/v1/events', { params: { query: { status: 'final', starts_after: weekAgo, limit: 1 } } })).data[0]!;
    const seasonYear = new Date(t.clock.now()).getUTCFullYear();

    ok('/api/v1/account/usage', await api.GET('/api/v1/account/usage'));
    // the trader screens
    ok('/api/v1/best-prices', await api.GET('/api/v1/best-prices', { params: { query: { league: [league], limit: 5 } } }));
    ok('/api/v1/ev', await api.GET('/api/v1/ev', { params: { query: { min_ev: 0, devig: 'shin', limit: 5 } } }));
    ok('/api/v1/fair-lines', await api.GET('/api/v1/fair-lines', { params: { query: { league: [league], devig: 'power', limit: 5 } } }));
    ok('/api/v1/middles', await api.GET('/api/v1/middles', { params: { query: { limit: 5 } } }));
    ok('/api/v1/steam', await api.GET('/api/v1/steam', { params: { query: { limit: 5 } } }));
    const signals = await api.GET('/api/v1/stream/signals', { params: { query: { topic: 'best_price', league: [league], heartbeat_ms: 1000 } }, parseAs: 'stream' });
    const signalStream = ok('/api/v1/stream/signals', signals) as unknown as ReadableStream<Uint8Array>;
    await signalStream.cancel();
    // the tick archive: one logged change, flushed to Parquet
    const archived = (await api.GET('/api/v1/odds', { params: { query: { league: [league], limit: 5 } } })).data!.data[0]!;
    await t.app.durable!.durable.ingest.submit([{ op: 'price', id: archived.id, priceAmerican: archived.priceAmerican === 150 ? 155 : 150 }]);
    await t.app.durable!.archive!.flush();
    const ticks = ok('/api/v1/history/ticks', await api.GET('/api/v1/history/ticks', { params: { query: { id: archived.id } } }));
    assert.ok(ticks.data.length >= 1, 'the archived change is in the tick history');
    ok('/api/v1/history/market', await api.GET('/api/v1/history/market', { params: { query: { event_id: archived.eventId, market_subtype: archived.marketSubtype } } }));
    ok('/api/v1/history/closing', await api.GET('/api/v1/history/closing', { params: { query: { event_id: archived.eventId, market_subtype: archived.marketSubtype } } }));
    ok('/api/v1/history/clv', await api.GET('/api/v1/history/clv', { params: { query: { id: archived.id } } }));
    const day = new Date(t.clock.now()).toISOString().slice(0, 10);
    const exported = await api.GET('/api/v1/history/export', { params: { query: { day } }, parseAs: 'arrayBuffer' });
    const parquet = new Uint8Array(ok('/api/v1/history/export', exported) as unknown as ArrayBuffer);
    assert.equal(Buffer.from(parquet.subarray(0, 4)).toString(), 'PAR1', 'a Parquet file');
    ok('/api/v1/arbitrage', await api.GET('/api/v1/arbitrage', { params: { query: { limit: 5 } } }));
    const asyncApi = ok('/api/v1/asyncapi.json', await api.GET('/api/v1/asyncapi.json'));
    assert.equal((asyncApi as { asyncapi?: string }).asyncapi?.startsWith('3.'), true);
    ok('/api/v1/edges', await api.GET('/api/v1/edges', { params: { query: { limit: 5 } } }));
    const event = ok('/api/v1/events/{eventId}', await api.GET('/api/v1/events/{eventId}', { params: { path: { eventId: row.eventId } } }));
    assert.equal(event.data[0]!.id, row.eventId);
    ok('/api/v1/events/{eventId}/odds', await api.GET('/api/v1/events/{eventId}/odds', { params: { path: { eventId: row.eventId } } }));
    ok('/api/v1/events/{eventId}/stats', await api.GET('/api/v1/events/{eventId}/stats', { params: { path: { eventId: final.id } } }));
    ok('/api/v1/events/active', await api.GET('/api/v1/events/active'));
    ok('/api/v1/historical/arbitrage', await api.GET('/api/v1/historical/arbitrage', { params: { query: { limit: 5 } } }));
    ok('/api/v1/historical/odds', await api.GET('/api/v1/historical/odds', { params: { query: { event_id: row.eventId } } }));
    const history = ok('/api/v1/historical/price-history', await api.GET('/api/v1/historical/price-history', { params: { query: { id: row.id } } }));
    assert.ok(history.data.some((r) => r.id === row.id && r.priceHistory.length > 0));
    ok('/api/v1/leagues', await api.GET('/api/v1/leagues'));
    ok('/api/v1/markets', await api.GET('/api/v1/markets'));
    ok('/api/v1/markets/active', await api.GET('/api/v1/markets/active'));
    ok('/api/v1/odds/updated', await api.GET('/api/v1/odds/updated', { params: { query: { since: new Date(t.clock.now() - 60_000).toISOString(), limit: 5 } } }));
    const document = ok('/api/v1/openapi.json', await api.GET('/api/v1/openapi.json'));
    assert.deepEqual(Object.keys((document as { paths: object }).paths).sort(), [...EVERY_PATH].sort(), 'the list above is every documented path');
    ok('/api/v1/players', await api.GET('/api/v1/players', { params: { query: { limit: 5 } } }));
    ok('/api/v1/players/{playerId}', await api.GET('/api/v1/players/{playerId}', { params: { path: { playerId: playerRow.playerId! } } }));
    ok('/api/v1/players/{playerId}/odds', await api.GET('/api/v1/players/{playerId}/odds', { params: { path: { playerId: playerRow.playerId! } } }));
    ok('/api/v1/players/{playerId}/stats', await api.GET('/api/v1/players/{playerId}/stats', { params: { path: { playerId: playerRow.playerId! } } }));
    ok('/api/v1/seasons', await api.GET('/api/v1/seasons', { params: { query: { year: seasonYear } } }));
    const snapshot = ok('/api/v1/snapshot', await api.GET('/api/v1/snapshot'));
    assert.equal(typeof snapshot.syncToken, 'string');
    ok('/api/v1/sportsbooks', await api.GET('/api/v1/sportsbooks'));
    ok('/api/v1/stats/players', await api.GET('/api/v1/stats/players', { params: { query: { team_id: teamId, limit: 5 } } }));
    // the SSE stream is open-ended: read until its first image message, then hang up
    const sse = await api.GET('/api/v1/stream/sse', { params: { query: { league: [league] } }, parseAs: 'stream' });
    const stream = ok('/api/v1/stream/sse', sse) as unknown as ReadableStream<Uint8Array>;
    const reader = stream.getReader();
    let text = '';
    while (!text.includes('event: image')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    assert.match(text, /event: image/);
    const status = ok('/api/v1/status', await api.GET('/api/v1/status'));
    assert.ok(status.data[0]!.totalMarkets > 0);
    ok('/api/v1/teams/{teamId}', await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId } } }));
    ok('/api/v1/teams/{teamId}/odds', await api.GET('/api/v1/teams/{teamId}/odds', { params: { path: { teamId } } }));
    ok('/api/v1/teams/{teamId}/stats', await api.GET('/api/v1/teams/{teamId}/stats', { params: { path: { teamId } } }));
    assert.deepEqual([...seen].sort(), [...EVERY_PATH].sort());
  });

  it('iterates a list by cursor: every row once, the same rows whatever the page size', async () => {
    const leagues = [...new Set((await client.api.GET('/api/v1/odds', { params: { query: { limit: 1000 } } })).data!.data.map((r) => r.league))].slice(0, 2);
    const walk = async (limit: number) => {
      const ids: string[] = [];
      for await (const row of client.odds({ league: leagues, limit })) ids.push(row.id);
      return ids;
    };
    const small = await walk(100);
    const large = await walk(1000);
    assert.ok(small.length > 200, `more than two pages walked (${small.length} rows)`);
    assert.equal(new Set(small).size, small.length);
    assert.deepEqual(small, large);
    const teams: string[] = [];
    for await (const team of client.rows('/api/v1/teams', { league: ['nfl'], limit: 7 })) teams.push(team.name);
    assert.equal(teams.length, 32);
  });

  it('revalidates with the ETag: an unchanged resource is a 304 on the service and a body for the caller', async () => {
    const fresh = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const before = t.app.httpMetrics.count('/api/v1/leagues', 304);
    const first = await fresh.api.GET('/api/v1/leagues');
    const second = await fresh.api.GET('/api/v1/leagues');
    assert.equal(second.response.status, 200);
    assert.deepEqual(second.data, first.data);
    assert.equal(t.app.httpMetrics.count('/api/v1/leagues', 304) - before, 1, 'the service answered 304');
    assert.deepEqual(fresh.etagStats, { notModified: 1, fetched: 1 });
  });

  it('throws OddsApiError with the code, detail and request id', async () => {
    const failed = client.odds({ limit: 1_000_000 }).next();
    await assert.rejects(failed, (error: unknown) => error instanceof OddsApiError && error.status === 400 && error.code === 'invalid_parameter' && error.requestId !== null);
  });
});

describe('client.sync()', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ simulatorRate: 1000, seed: 3 });
  });
  after(() => t.close());

  it('holds the same board as a fresh snapshot after the simulator ran while it followed the delta feed', async () => {
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const errors: unknown[] = [];
    const board = await client.sync({ pageSize: 200, intervalMs: 20, onError: (error) => errors.push(error) });
    assert.ok(board.rows.size > 1000);
    const startSeq = t.app.engine.seq;
    board.follow();
    try {
      // the board moves (the simulator advances the frozen clock: games start and end) while the copy follows
      assert.ok(await eventually(() => t.app.engine.seq > startSeq + 3000, 30_000, 20), 'the simulator ran');
    } finally {
      t.app.simulator.stop();
      await board.stop();
    }
    const last = await board.walk(); // the board is still: after this walk the copy is current
    assert.equal(last.note, null);
    assert.ok(board.totals.walks > 2, `walks while the board moved: ${JSON.stringify(board.totals)}`);
    assert.ok(board.totals.upserted > 1000 && board.totals.removed > 0, `rows changed and rows pulled: ${JSON.stringify(board.totals)}`);
    // The snapshot answers its newest complete version at once, which may be a version
    // behind the board for a moment after it stops: compare once it shows the board's seq.
    const seq = t.app.engine.seq;
    const current = await eventually(async () => Number((await httpRequest(t.port, '/api/v1/snapshot', { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } })).headers['x-board-seq']) === seq, 30_000, 20);
    assert.ok(current, `the snapshot never showed the board's seq ${seq}`);
    const fresh = rowsOfSnapshot(await client.snapshot());
    const mine = new Map([...board.rows].map(([id, row]) => [id, JSON.stringify(row)]));
    assert.deepEqual([...fresh.keys()].filter((id) => !mine.has(id)), [], 'rows missing from the copy');
    assert.deepEqual([...mine.keys()].filter((id) => !fresh.has(id)), [], 'rows the service no longer has');
    for (const [id, row] of fresh) assert.equal(mine.get(id), row, id);
    assert.deepEqual(errors, []);
  });
});
