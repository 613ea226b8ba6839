// The running fleet for fleet.test.ts: the service as child processes (tsx
// service/main.ts, fixtures/harness/service-child.ts) with LOG=nats, one writer and its
// replicas, each on its own DATA_DIR; batches posted to the writer's ingest port; and
// every GET route of the OpenAPI document fetched from a node, to compare nodes.
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServiceChild, type ServiceChild } from '../../fixtures/harness/service-child.ts';
import { httpRequest, type HttpReply } from '../helpers/server.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

export const INGEST_TOKEN = 'fleet-test-token';

/** A node of the fleet: writer or replica, on its DATA_DIR. */
export function startNode(natsUrl: string, dataDir: string, role: 'writer' | 'replica', id: string, extra: Record<string, string> = {}): Promise<ServiceChild> {
  return startServiceChild(dataDir, {
    LOG: 'nats',
    ROLE: role,
    NATS_URL: natsUrl,
    REPLICA_ID: id,
    INGEST_TOKEN,
    CHECKPOINT_INTERVAL_MS: '200',
    WAL_FSYNC: '0',
    LOG_LEVEL: 'info',
    RATE_LIMIT_ENFORCE: '1',
    ...extra,
  });
}

/** POSTs one body; resolves with status and body text. */
export function post(port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': 'application/x-ndjson', 'Content-Length': Buffer.byteLength(body), ...headers }, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Ids of rows with a price the writer serves (what random batches tick). */
export async function priceableIds(port: number): Promise<string[]> {
  const reply = await httpRequest(port, '/api/v1/odds?limit=1000');
  assert.equal(reply.status, 200);
  const rows = (JSON.parse(reply.body.toString()) as { data: { id: string; priceAmerican: number | null }[] }).data;
  return rows.filter((row) => row.priceAmerican !== null).map((row) => row.id);
}

export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One ndjson batch of price ticks (some suspended) on `ids`, distinct ids. */
export function randomBatch(ids: readonly string[], random: () => number, size: number): string {
  const picked = new Set<string>();
  while (picked.size < Math.min(size, ids.length)) picked.add(ids[Math.floor(random() * ids.length)]!);
  const lines: string[] = [];
  for (const id of picked) {
    const magnitude = 100 + Math.floor(random() * 400);
    lines.push(JSON.stringify({ op: 'price', id, priceAmerican: random() < 0.5 ? -magnitude : magnitude, suspended: random() < 0.05 }));
  }
  return `${lines.join('\n')}\n`;
}

export interface IngestRun {
  /** Highest board seq an acknowledgement reported. */
  lastSeq: number;
  acked: number;
  /** Answers other than 200 (the writer gone mid-run: connection errors count here too). */
  failed: number;
}

/**
 * Posts `batches` random batches to the ingest port, `lanes` in flight; stops a lane at
 * its first failure when `tolerateFailure` (the writer killed under it).
 */
export async function ingestRandom(port: number, ids: readonly string[], random: () => number, batches: number, options: { lanes?: number; tolerateFailure?: boolean; onAck?: (acked: number) => void } = {}): Promise<IngestRun> {
  const run: IngestRun = { lastSeq: 0, acked: 0, failed: 0 };
  let next = 0;
  const lane = async () => {
    while (next < batches) {
      next++;
      const body = randomBatch(ids, random, 1 + Math.floor(random() * 40));
      let reply: { status: number; body: string };
      try {
        reply = await post(port, '/ingest/v1/batches', body, { Authorization: `Bearer ${INGEST_TOKEN}` });
      } catch (error) {
        if (!options.tolerateFailure) throw error;
        run.failed++;
        return;
      }
      if (reply.status !== 200) {
        if (!options.tolerateFailure) assert.fail(`ingest answered ${reply.status}: ${reply.body}`);
        run.failed++;
        return;
      }
      const seq = (JSON.parse(reply.body) as { seq: number }).seq;
      run.lastSeq = Math.max(run.lastSeq, seq);
      run.acked++;
      options.onAck?.(run.acked);
    }
  };
  await Promise.all(Array.from({ length: options.lanes ?? 4 }, lane));
  return run;
}

/** The node's board seq, from X-Board-Seq of /api/v1/status. */
export async function boardSeq(port: number): Promise<number> {
  const reply = await httpRequest(port, '/api/v1/status');
  return Number(reply.headers['x-board-seq']);
}

/** Waits until every node serves X-Board-Seq `seq`. */
export async function waitForSeq(nodes: readonly ServiceChild[], seq: number, timeoutMs = 30_000): Promise<void> {
  for (const node of nodes) {
    let seen = -1;
    const reached = await eventually(async () => (seen = await boardSeq(node.port)) === seq, timeoutMs, 20);
    assert.ok(reached, `node on port ${node.port} stayed at seq ${seen}, expected ${seq}\n${node.stderr().slice(-2000)}`);
    // the snapshot is rebuilt behind the board: wait until its newest version is that seq too
    const snapshot = await eventually(async () => Number((await httpRequest(node.port, '/api/v1/snapshot?include_history=true', { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } })).headers['x-board-seq']) === seq, timeoutMs, 20);
    assert.ok(snapshot, `the snapshot of the node on port ${node.port} never reached seq ${seq}`);
  }
}

/**
 * Every GET path of the node's OpenAPI document (path parameters filled with ids the
 * board has; the push stream left out: it never ends), plus pages and filters that
 * exercise the cursors, the delta feed and the snapshot with history.
 */
export async function everyPath(port: number): Promise<string[]> {
  const document = JSON.parse((await httpRequest(port, '/api/v1/openapi.json')).body.toString()) as { paths: Record<string, { get?: { responses?: Record<string, { content?: Record<string, unknown> }> } }> };
  const odds = JSON.parse((await httpRequest(port, '/api/v1/odds?limit=1')).body.toString()) as { data: { eventId: string }[] };
  const teams = JSON.parse((await httpRequest(port, '/api/v1/teams?limit=1')).body.toString()) as { data: { id: string }[] };
  const players = JSON.parse((await httpRequest(port, '/api/v1/players?limit=1')).body.toString()) as { data: { id: string }[] };
  const values: Record<string, string | undefined> = { eventId: odds.data[0]?.eventId, teamId: teams.data[0]?.id, playerId: players.data[0]?.id };
  const paths: string[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const content = item.get?.responses?.['200']?.content ?? {};
    if ('text/event-stream' in content) continue;
    let missing = false;
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = values[name];
      if (value === undefined) missing = true;
      return encodeURIComponent(value ?? '');
    });
    if (!missing) paths.push(path);
  }
  paths.push('/api/v1/snapshot?include_history=true', '/api/v1/odds?limit=500', '/api/v1/odds?league=nba&limit=200', '/api/v1/odds/updated?since=0&limit=1000', '/api/v1/edges?limit=100', '/api/v1/arbitrage?limit=100', '/api/v1/events?limit=500');
  const first = JSON.parse((await httpRequest(port, '/api/v1/odds?limit=500')).body.toString()) as { meta?: { nextCursor?: string | null } };
  if (typeof first.meta?.nextCursor === 'string') paths.push(`/api/v1/odds?limit=500&cursor=${encodeURIComponent(first.meta.nextCursor)}`);
  return paths;
}

export interface NodeAnswers {
  seq: number;
  replies: Map<string, HttpReply>;
}

/** GETs every path (gzip accepted, so the snapshot's stored bytes come as they are). */
export async function answers(port: number, paths: readonly string[]): Promise<NodeAnswers> {
  const replies = new Map<string, HttpReply>();
  for (const path of paths) replies.set(path, await httpRequest(port, path, { headers: { 'Accept-Encoding': 'gzip' } }));
  return { seq: await boardSeq(port), replies };
}

/** Status, X-Board-Seq, ETag and body bytes alike on every path. */
export function assertSameAnswers(reference: NodeAnswers, other: NodeAnswers, who: string): void {
  assert.equal(other.seq, reference.seq, `${who}: board seq`);
  for (const [path, reply] of reference.replies) {
    const theirs = other.replies.get(path)!;
    assert.equal(theirs.status, reply.status, `${who}: status of ${path}`);
    assert.equal(theirs.headers['x-board-seq'], reply.headers['x-board-seq'], `${who}: X-Board-Seq of ${path}`);
    assert.equal(theirs.headers.etag, reply.headers.etag, `${who}: ETag of ${path}`);
    assert.ok(theirs.body.equals(reply.body), `${who}: ${path} differs:\n  ${reply.body.toString().slice(0, 400)}\n  ${theirs.body.toString().slice(0, 400)}`);
  }
}

/** The first Server-Sent Event with data of a stream subscription (the image it starts with), as sent. */
export function firstStreamEvent(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        // events are separated by a blank line; the preamble (comment, retry) carries no data
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
          const event = text.slice(0, end);
          text = text.slice(end + 2);
          if (event.includes('data:')) {
            resolve(event);
            req.destroy();
            return;
          }
        }
      });
      res.on('error', () => {});
    });
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
  });
}
