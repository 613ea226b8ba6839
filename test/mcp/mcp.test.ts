// The MCP server through the SDK's own client: over Streamable HTTP on the app's public
// port (POST /mcp) and over stdio (npm run mcp as a child process reading the same
// app). Tools are listed with JSON Schema arguments; calls answer what the API answers
// for the same request (same rows, same cursors), bounded and paged; bad arguments and
// API refusals come back as tool errors; and each tool call is one API request for the
// caller's key: counted and rate-limited like it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOOL_LIMIT_MAX } from '../../mcp/tools.ts';

/** Small enough that a page of 100 odds rows (~43 KB on the small board) is cut. */
const MAX_ANSWER_BYTES = 24 * 1024;
import { startTestApp, type TestApp } from '../helpers/app.ts';

async function connect(port: number, key?: string): Promise<Client> {
  const client = new Client({ name: 'odds-engine-test', version: '1.0.0' });
  const headers: Record<string, string> = key === undefined ? {} : { 'X-Api-Key': key };
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers } }));
  return client;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): any {
  const content = result.content as { type: string; text: string }[];
  assert.equal(content.length, 1);
  assert.equal(content[0]!.type, 'text');
  assert.ok(Buffer.byteLength(content[0]!.text) <= MAX_ANSWER_BYTES);
  return JSON.parse(content[0]!.text);
}

describe('MCP over Streamable HTTP', () => {
  let t: TestApp;
  let client: Client;
  before(async () => {
    t = await startTestApp({ env: { MCP_MAX_ANSWER_BYTES: String(MAX_ANSWER_BYTES) } });
    client = await connect(t.port);
  });
  after(async () => {
    await client.close();
    await t.close();
  });

  const api = async (path: string) => JSON.parse((await t.request(path)).body.toString('utf8'));

  it('lists the read tools with JSON Schema arguments from the API document', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['get_arbitrage', 'get_edges', 'get_event', 'get_historical_arbitrage', 'get_odds', 'get_odds_at', 'get_odds_updated', 'get_price_history', 'list_active_events', 'list_events', 'snapshot_summary']);
    const odds = tools.find((tool) => tool.name === 'get_odds')!;
    const properties = odds.inputSchema.properties as Record<string, any>;
    assert.deepEqual([...properties.odds_format.enum].sort(), ['all', 'american', 'decimal', 'probability']);
    assert.equal(properties.limit.maximum, TOOL_LIMIT_MAX);
    assert.equal(properties.league.type, 'array');
    assert.deepEqual(tools.find((tool) => tool.name === 'get_event')!.inputSchema.required, ['eventId']);
    assert.deepEqual(tools.find((tool) => tool.name === 'get_odds_updated')!.inputSchema.required, ['since']);
    assert.ok(tools.every((tool) => tool.annotations?.readOnlyHint === true));
  });

  it('answers what the API answers, page by page', async () => {
    const first = textOf(await client.callTool({ name: 'get_odds', arguments: { league: ['nba'], limit: 7 } }));
    const direct = await api('/api/v1/odds?league=nba&limit=7');
    assert.deepEqual(first.data, direct.data);
    assert.equal(first.data.length, 7);
    assert.equal(typeof first.nextCursor, 'string');
    const second = textOf(await client.callTool({ name: 'get_odds', arguments: { league: ['nba'], limit: 7, cursor: first.nextCursor } }));
    const directSecond = await api(`/api/v1/odds?league=nba&limit=7&cursor=${encodeURIComponent(first.nextCursor)}`);
    assert.deepEqual(second.data, directSecond.data);
    assert.notDeepEqual(second.data[0].id, first.data[0].id);

    for (const [name, path, args] of [
      ['get_arbitrage', '/api/v1/arbitrage?limit=25', {}],
      ['get_edges', '/api/v1/edges?limit=25&min_edge=0', { min_edge: 0 }],
      ['list_events', '/api/v1/events?limit=25', {}],
    ] as const) {
      const viaTool = textOf(await client.callTool({ name, arguments: args }));
      assert.deepEqual(viaTool.data, (await api(path)).data, name);
    }
    const event = first.data[0].eventId as string;
    const detail = textOf(await client.callTool({ name: 'get_event', arguments: { eventId: event } }));
    assert.equal(detail.data[0].id, event);
    // one event's prices at a time: the API answers them whole, the tool pages them with offset
    const whole = (await api(`/api/v1/historical/odds?event_id=${event}`)).data as unknown[];
    assert.ok(whole.length > 10);
    const asOf = textOf(await client.callTool({ name: 'get_odds_at', arguments: { event_id: event, limit: 10 } }));
    assert.deepEqual(asOf.data, whole.slice(0, 10));
    assert.equal(asOf.meta.total, whole.length);
    assert.equal(asOf.meta.nextOffset, 10);
    const asOfNext = textOf(await client.callTool({ name: 'get_odds_at', arguments: { event_id: event, limit: 10, offset: asOf.meta.nextOffset } }));
    assert.deepEqual(asOfNext.data, whole.slice(10, 20));
    const history = textOf(await client.callTool({ name: 'get_price_history', arguments: { id: first.data[0].id } }));
    assert.ok(history.data.length > 0);
    assert.deepEqual(history.data, (await api(`/api/v1/historical/price-history?id=${encodeURIComponent(first.data[0].id)}`)).data.slice(0, 25));
  });

  it('summarizes the board without sending it', async () => {
    const summary = textOf(await client.callTool({ name: 'snapshot_summary', arguments: {} }));
    const status = (await api('/api/v1/status')).data[0];
    assert.equal(summary.totalMarkets, status.totalMarkets);
    assert.equal(summary.sportsbookCount, status.sportsbooks);
    assert.deepEqual(summary.leagues, (await api('/api/v1/leagues')).data);
    assert.ok(summary.topSportsbooks.length > 0 && summary.topSportsbooks.length <= 50);
  });

  it('keeps answers bounded: a page over the bound is cut and says so, its cursor still exact', async () => {
    const full = (await t.request(`/api/v1/odds?limit=${TOOL_LIMIT_MAX}`)).body.length;
    assert.ok(full > MAX_ANSWER_BYTES, `a page of ${TOOL_LIMIT_MAX} odds rows is ${full} bytes`);
    const body = textOf(await client.callTool({ name: 'get_odds', arguments: { limit: TOOL_LIMIT_MAX } }));
    assert.ok(body.data.length > 0 && body.data.length < TOOL_LIMIT_MAX);
    assert.match(body.meta.note, /page cut to \d+ rows/);
    assert.deepEqual(body.data, (await api(`/api/v1/odds?limit=${body.data.length}`)).data);
    const next = textOf(await client.callTool({ name: 'get_odds', arguments: { limit: 1, cursor: body.nextCursor } }));
    assert.deepEqual(next.data, (await api(`/api/v1/odds?limit=1&cursor=${encodeURIComponent(body.nextCursor)}`)).data);
  });

  it('refuses bad arguments by their schema and passes the API refusals on', async () => {
    const badEnum = await client.callTool({ name: 'get_odds', arguments: { odds_format: 'fractional' } });
    assert.equal(badEnum.isError, true);
    assert.match(textOf(badEnum).detail, /odds_format/);
    const tooMany = await client.callTool({ name: 'get_odds', arguments: { limit: 1000 } });
    assert.equal(tooMany.isError, true);
    const unknownArg = await client.callTool({ name: 'get_odds', arguments: { colour: 'red' } });
    assert.equal(unknownArg.isError, true);
    const missing = await client.callTool({ name: 'get_event', arguments: { eventId: 'no-such-event' } });
    assert.equal(missing.isError, true);
    assert.equal(textOf(missing).code, 'not_found');
    const badCursor = await client.callTool({ name: 'get_odds', arguments: { cursor: 'garbage' } });
    assert.equal(textOf(badCursor).code, 'invalid_cursor');
  });
});

describe('MCP keys and limits', () => {
  it('each tool call is one API request for the caller key: refused without a key when keys are required, counted, rate-limited', async () => {
    const t = await startTestApp({ env: { REQUIRE_KEY: '1', RATE_LIMIT_ENFORCE: '1' } });
    try {
      const key = t.app.persistence.apiKeys.create({ plan: 'FREE', now: t.clock.now() }).key;
      const anonymous = await connect(t.port);
      const refused = await anonymous.callTool({ name: 'get_arbitrage', arguments: {} });
      assert.equal(refused.isError, true);
      assert.equal(textOf(refused).code, 'missing_api_key');
      await anonymous.close();

      const keyed = await connect(t.port, key);
      for (let i = 0; i < 3; i++) assert.notEqual((await keyed.callTool({ name: 'get_arbitrage', arguments: {} })).isError, true);
      const usage = JSON.parse((await t.request('/api/v1/account/usage', { headers: { 'X-Api-Key': key } })).body.toString('utf8')).data[0];
      assert.equal(usage.monthlyUsed, 3);
      // FREE: 60 a minute, 3 used; the clock is frozen, so the minute does not roll over
      let limited: any = null;
      for (let i = 0; i < 60 && limited === null; i++) {
        const result = await keyed.callTool({ name: 'get_arbitrage', arguments: {} });
        if (result.isError === true) limited = textOf(result);
      }
      assert.equal(limited?.code, 'rate_limited');
      await keyed.close();
    } finally {
      await t.close();
    }
  });
});

describe('MCP over stdio', () => {
  it('lists and calls the tools of npm run mcp against a running service', async () => {
    const t = await startTestApp();
    const client = new Client({ name: 'odds-engine-test', version: '1.0.0' });
    try {
      await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'mcp/stdio.ts'], env: { ...(process.env as Record<string, string>), MCP_API_URL: `http://127.0.0.1:${t.port}` }, stderr: 'pipe' }));
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'get_arbitrage'));
      const answer = textOf(await client.callTool({ name: 'list_events', arguments: { limit: 3 } }));
      assert.deepEqual(answer.data, JSON.parse((await t.request('/api/v1/events?limit=3')).body.toString('utf8')).data);
    } finally {
      await client.close();
      await t.close();
    }
  });
});
