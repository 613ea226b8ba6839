// The MCP tools: each one a GET route of the public API, its arguments the route's
// parameters with the JSON Schemas the served OpenAPI document gives them (one
// definition: http/schemas.ts' ParamDefs), so an agent sees the constraints the API
// enforces. Differences, for answers an agent can read:
//   - `limit` defaults to 25 and is at most 100 (the API's 1000-row pages are too big to
//     read); `cursor` pages on, as in the API (pass back nextCursor);
//   - a list the API answers whole (one event's prices at a time, one selection's
//     history, historical arbitrage) is cut here: `limit` rows from `offset`, with
//     meta.total and meta.nextOffset;
//   - an answer is at most MCP_MAX_ANSWER_BYTES of JSON (default 64 KiB): a page that would be larger is
//     fetched again with a smaller limit (the keyset cursor stays exact), and says so
//     in meta.note;
//   - snapshot_summary reads /status, /leagues, /sportsbooks and /markets/active in
//     place of the full snapshot (megabytes of gzip), their lists cut to the top 50.
import type { ApiClient } from './apiClient.ts';

/** The default bound of one answer's JSON (MCP_MAX_ANSWER_BYTES). */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024;
export const TOOL_LIMIT_DEFAULT = 25;
export const TOOL_LIMIT_MAX = 100;
const SUMMARY_TOP = 50;

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  /** The OpenAPI path, with {params}. */
  path: string;
  /** Query parameters left out. */
  omit?: readonly string[];
  /** The API answers the whole list: the tool pages it with limit and offset. */
  slice?: boolean;
}

export const API_TOOLS: readonly ToolDef[] = [
  { name: 'get_odds', title: 'Odds', path: '/api/v1/odds', description: 'Current odds rows (one price at one book), filtered by league, sportsbook, market, event_id, player_id, team_id or scope; paged with cursor.' },
  { name: 'get_odds_updated', title: 'Odds changed since', path: '/api/v1/odds/updated', description: 'Odds rows whose price changed at or after `since` (the delta feed), removed rows included as tombstones; paged with cursor.' },
  { name: 'list_events', title: 'Events', path: '/api/v1/events', description: 'Events (games) by league, team, status and start window (default: the next 14 days); paged with cursor.' },
  { name: 'list_active_events', title: 'Active events', path: '/api/v1/events/active', description: 'Events that currently have live markets; paged with cursor.' },
  { name: 'get_event', title: 'Event', path: '/api/v1/events/{eventId}', description: 'One event with its teams, status, context and final score when known.' },
  { name: 'get_edges', title: 'DFS edges', path: '/api/v1/edges', description: 'DFS picks priced better than the no-vig fair value of sharp books (edge = fair probability - breakeven), largest first; paged with cursor.' },
  { name: 'get_arbitrage', title: 'Arbitrage', path: '/api/v1/arbitrage', description: 'Cross-book arbitrage (two-way and three-way) with legs and equal-payout stakes, largest profit first; paged with cursor.' },
  { name: 'get_odds_at', title: 'Prices at a past time', path: '/api/v1/historical/odds', slice: true, description: "Each selection's American price of one event at (or just before) `date`, rebuilt from the price history; without date, the current price. Paged with offset." },
  { name: 'get_price_history', title: 'Price history', path: '/api/v1/historical/price-history', slice: true, description: 'One selection (an odds id) at every book that quotes it, each with its last 50 price changes (fs/ls epoch seconds, pa American, pd decimal, dm DFS multiplier, su suspended), for line movement. Paged with offset.' },
  { name: 'get_historical_arbitrage', title: 'Arbitrage at a past time', path: '/api/v1/historical/arbitrage', slice: true, omit: ['limit'], description: 'Arbitrage that existed at `to`, replayed from price history with staleness window to - from (the 500 largest). Paged with offset.' },
];

export interface ToolAnswer {
  isError: boolean;
  text: string;
}

interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: false;
}

export interface BuiltTool {
  def: ToolDef | null;
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchemaObject;
  pathParams: string[];
  call(api: ApiClient, args: Record<string, unknown>): Promise<ToolAnswer>;
}

/** MCP_MAX_ANSWER_BYTES from the environment: 4 KiB to 16 MiB, default 64 KiB. */
export function maxAnswerBytesFrom(env: NodeJS.ProcessEnv): number {
  const text = env.MCP_MAX_ANSWER_BYTES;
  if (text === undefined || text === '') return DEFAULT_MAX_ANSWER_BYTES;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 4096 || value > 16 * 1024 * 1024) throw new Error('MCP_MAX_ANSWER_BYTES must be an integer from 4096 to 16777216');
  return value;
}

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Record<string, unknown>;
}

/** The tools, their argument schemas read from the served OpenAPI document. */
export function buildTools(openapi: { paths: Record<string, { get?: { parameters?: OpenApiParameter[] } }> }, maxBytes = DEFAULT_MAX_ANSWER_BYTES): BuiltTool[] {
  const tools: BuiltTool[] = [];
  for (const def of API_TOOLS) {
    const operation = openapi.paths[def.path]?.get;
    if (operation === undefined) throw new Error(`the API document has no GET ${def.path}`);
    const properties: Record<string, Record<string, unknown>> = {};
    const required: string[] = [];
    const pathParams: string[] = [];
    let paged = false;
    for (const p of operation.parameters ?? []) {
      if (p.in !== 'path' && p.in !== 'query') continue;
      if (def.omit?.includes(p.name)) continue;
      let schema = { ...(p.schema ?? {}) };
      if (p.name === 'limit') {
        paged = true;
        schema = { type: 'integer', minimum: 1, maximum: TOOL_LIMIT_MAX, default: TOOL_LIMIT_DEFAULT };
      }
      properties[p.name] = { ...schema, ...(p.description !== undefined && { description: p.description }) };
      if (p.in === 'path') pathParams.push(p.name);
      if (p.required === true) required.push(p.name);
    }
    if (def.slice === true) {
      properties.limit = { type: 'integer', minimum: 1, maximum: TOOL_LIMIT_MAX, default: TOOL_LIMIT_DEFAULT, description: `Rows per answer, 1 to ${TOOL_LIMIT_MAX} (default ${TOOL_LIMIT_DEFAULT}).` };
      properties.offset = { type: 'integer', minimum: 0, default: 0, description: 'Rows to skip; page on with offset = meta.nextOffset.' };
    } else if (paged) properties.limit!.description = `Rows per answer, 1 to ${TOOL_LIMIT_MAX} (default ${TOOL_LIMIT_DEFAULT}); page on with cursor = nextCursor.`;
    tools.push({
      def,
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema: { type: 'object', properties, required, additionalProperties: false },
      pathParams,
      call: (api, args) => (def.slice === true ? callSlicedTool(api, def, pathParams, args, maxBytes) : callApiTool(api, def, pathParams, paged, args, maxBytes)),
    });
  }
  tools.push({
    def: null,
    name: 'snapshot_summary',
    title: 'Board summary',
    description: `What is on the board now: live market and sportsbook counts, the leagues in season, the top ${SUMMARY_TOP} sportsbooks by live markets and the top ${SUMMARY_TOP} market types by live count. For rows, use get_odds.`,
    inputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false },
    pathParams: [],
    call: (api) => snapshotSummary(api),
  });
  return tools;
}

function queryValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(',');
  return String(value);
}

function pathOf(def: ToolDef, pathParams: readonly string[], args: Record<string, unknown>, limit: number | null): string {
  let path = def.path;
  for (const name of pathParams) path = path.replace(`{${name}}`, encodeURIComponent(String(args[name])));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (pathParams.includes(name) || value === undefined || value === null || name === 'limit' || name === 'offset') continue;
    query.set(name, queryValue(value));
  }
  if (limit !== null) query.set('limit', String(limit));
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

async function callApiTool(api: ApiClient, def: ToolDef, pathParams: readonly string[], paged: boolean, args: Record<string, unknown>, maxBytes: number): Promise<ToolAnswer> {
  const asked = paged ? Number(args.limit ?? TOOL_LIMIT_DEFAULT) : null;
  let limit = asked;
  for (;;) {
    const reply = await api.get(pathOf(def, pathParams, args, limit));
    if (reply.status !== 200) return { isError: true, text: reply.body === '' ? `HTTP ${reply.status}` : reply.body };
    if (Buffer.byteLength(reply.body) <= maxBytes) {
      return { isError: false, text: limit === asked ? reply.body : withNote(reply.body, `page cut to ${limit} rows to stay under ${maxBytes} bytes; page on with cursor`) };
    }
    if (limit === null || limit <= 1) {
      return { isError: true, text: JSON.stringify({ success: false, code: 'answer_too_large', detail: `the answer is over ${maxBytes} bytes even as one row; narrow the filters` }) };
    }
    // a smaller page from the same cursor: the keyset stays exact, the agent pages on with nextCursor
    limit = Math.max(1, Math.floor(limit / 2));
  }
}

/** A list the API answers whole, cut to `limit` rows from `offset` (fewer when they would pass the byte bound). */
async function callSlicedTool(api: ApiClient, def: ToolDef, pathParams: readonly string[], args: Record<string, unknown>, maxBytes: number): Promise<ToolAnswer> {
  const reply = await api.get(pathOf(def, pathParams, args, null));
  if (reply.status !== 200) return { isError: true, text: reply.body === '' ? `HTTP ${reply.status}` : reply.body };
  const parsed = JSON.parse(reply.body) as { data: unknown[]; meta: Record<string, unknown> };
  const offset = Number(args.offset ?? 0);
  let limit = Number(args.limit ?? TOOL_LIMIT_DEFAULT);
  for (;;) {
    const data = parsed.data.slice(offset, offset + limit);
    const next = offset + data.length < parsed.data.length ? offset + data.length : null;
    const text = JSON.stringify({ ...parsed, data, meta: { ...parsed.meta, count: data.length, total: parsed.data.length, offset, nextOffset: next } });
    if (Buffer.byteLength(text) <= maxBytes) return { isError: false, text };
    if (limit <= 1) return { isError: true, text: JSON.stringify({ success: false, code: 'answer_too_large', detail: `one row is over ${maxBytes} bytes` }) };
    limit = Math.max(1, Math.floor(limit / 2));
  }
}

function withNote(body: string, note: string): string {
  const parsed = JSON.parse(body) as { meta?: { note?: string } };
  parsed.meta = { ...parsed.meta, note: parsed.meta?.note === undefined ? note : `${parsed.meta.note}; ${note}` };
  return JSON.stringify(parsed);
}

async function snapshotSummary(api: ApiClient): Promise<ToolAnswer> {
  const paths = ['/api/v1/status', '/api/v1/leagues', '/api/v1/sportsbooks', '/api/v1/markets/active'];
  const replies = await Promise.all(paths.map((p) => api.get(p)));
  const failed = replies.find((r) => r.status !== 200);
  if (failed !== undefined) return { isError: true, text: failed.body };
  const [status, leagues, books, markets] = replies.map((r) => JSON.parse(r.body) as { data: any[]; meta: { updated: string } });
  const byCount = <T>(rows: T[], count: (row: T) => number) => [...rows].sort((a, b) => count(b) - count(a));
  const summary = {
    updated: status!.meta.updated,
    totalMarkets: status!.data[0]?.totalMarkets ?? 0,
    sportsbookCount: status!.data[0]?.sportsbooks ?? 0,
    leagues: leagues!.data,
    topSportsbooks: byCount(books!.data, (b: { marketCount: number }) => b.marketCount).slice(0, SUMMARY_TOP),
    marketTypeCount: markets!.data.length,
    topMarkets: byCount(markets!.data, (m: { liveCount: number }) => m.liveCount).slice(0, SUMMARY_TOP),
  };
  return { isError: false, text: JSON.stringify(summary) };
}
