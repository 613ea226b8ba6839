// Writers and replicas over a real nats-server for the replica tests: each node has its
// own DATA_DIR, its own SQLite file (the fixture board's cold records loaded on first
// open, as a service start does) and its own engine; random batches of price ticks and
// removals for the writer; and a comparison of what every node serves over HTTP.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import type { Board } from '../../engine/model.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { Replica } from '../../ingest/replica.ts';
import { ReplicaWriter } from '../../ingest/replicaWriter.ts';
import { NatsBatchLog } from '../../persistence/nats/natsBatchLog.ts';
import { NatsCheckpointStore } from '../../persistence/nats/natsCheckpoints.ts';
import { openBoardStream } from '../../persistence/nats/natsStream.ts';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';
import { startApp } from '../../service/app.ts';
import { httpRequest, type HttpReply } from '../helpers/server.ts';

export const STREAM = 'ODDS';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

const withOdds = new Map<Board, Set<string>>();

/** The events with odds on the fixture board as loaded (what a first start passes to loadCold). */
function eventsWithOdds(board: Board, clock: Clock): Set<string> {
  let set = withOdds.get(board);
  if (set === undefined) {
    const engine = new OddsEngine(clock);
    loadBoard(engine, board);
    set = new Set(engine.eventIdsWithLiveRows());
    withOdds.set(board, set);
  }
  return set;
}

/** The node's SQLite file, with the fixture board's cold records when it is new. */
export function openCold(dataDir: string, board: Board, clock: Clock): Persistence {
  const path = join(dataDir, 'odds.db');
  const fresh = !existsSync(path);
  const persistence = openPersistence({ path, env: {} });
  if (fresh) persistence.loadCold(board, { eventsWithOdds: eventsWithOdds(board, clock) });
  return persistence;
}

export interface WriterNode {
  nc: NatsConnection;
  writer: ReplicaWriter;
  persistence: Persistence;
  dataDir: string;
  close(): Promise<void>;
}

/** A writer on `dataDir`; a fresh one (nothing anywhere) loads `board` and checkpoints it to disk and the object store. */
export async function openWriter(url: string, dataDir: string, clock: Clock, board: Board): Promise<WriterNode> {
  const nc = await connect({ servers: url });
  const log = await NatsBatchLog.open(nc, { stream: STREAM });
  const checkpoints = await NatsCheckpointStore.open(nc, { stream: STREAM });
  const persistence = openCold(dataDir, board, clock);
  const writer = await ReplicaWriter.open({ log, checkpoints, dataDir, clock, cold: persistence, fsync: false, warn: () => {} });
  if (writer.fresh) {
    loadBoard(writer.engine, board);
    await writer.checkpointNow();
  }
  return {
    nc,
    writer,
    persistence,
    dataDir,
    async close() {
      await writer.close();
      await nc.close();
      persistence.close();
    },
  };
}

export interface ReplicaNode {
  nc: NatsConnection;
  replica: Replica;
  persistence: Persistence;
  dataDir: string;
  close(): Promise<void>;
}

export async function openReplica(url: string, dataDir: string, clock: Clock, board: Board): Promise<ReplicaNode> {
  const nc = await connect({ servers: url });
  const stream = await openBoardStream(nc, { stream: STREAM, manage: false });
  const checkpoints = await NatsCheckpointStore.open(nc, { stream: STREAM });
  const persistence = openCold(dataDir, board, clock);
  const replica = await Replica.open({ board: stream, checkpoints, dataDir, clock, cold: persistence, fsync: false, warn: () => {} });
  await replica.follow();
  return {
    nc,
    replica,
    persistence,
    dataDir,
    async close() {
      await replica.close();
      await nc.close();
      persistence.close();
    },
  };
}

/** A small deterministic generator (tests print nothing random they cannot replay). */
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

/**
 * A batch of `size` changes on live sportsbook rows: price ticks, some suspensions,
 * about one removal in 50. `removed` is shared by the batches of a test: a batch still
 * in flight may remove a row the engine shows live, and a tick on it would be refused.
 */
export function randomBatch(engine: OddsEngine, random: () => number, size: number, removed = new Set<string>()): unknown[] {
  const s = engine.store;
  const changes: unknown[] = [];
  let guard = 0;
  while (changes.length < size && guard++ < size * 100) {
    const slot = Math.floor(random() * s.size);
    if (!s.isLive(slot) || s.priceAmerican[slot] === NO_PRICE) continue;
    const id = engine.idOf(slot);
    if (removed.has(id)) continue;
    if (random() < 0.02 && !changes.some((c) => (c as { id: string }).id === id)) {
      removed.add(id);
      changes.push({ op: 'remove', id });
      continue;
    }
    const magnitude = 100 + Math.floor(random() * 400);
    changes.push({ op: 'price', id, priceAmerican: random() < 0.5 ? -magnitude : magnitude, suspended: random() < 0.05 });
  }
  return changes;
}

/** Routes whose bodies must match byte for byte at the same board seq. */
export const COMPARED_PATHS = [
  '/api/v1/snapshot?include_history=true',
  '/api/v1/odds?limit=500',
  '/api/v1/odds?league=nba&limit=200',
  '/api/v1/odds/updated?since=0&limit=1000',
  '/api/v1/edges?limit=100',
  '/api/v1/arbitrage?limit=100',
  '/api/v1/status',
];

export interface Served {
  seq: number;
  replies: HttpReply[];
}

/** Serves `engine` with startApp on an ephemeral port, GETs every compared path (and the next /odds page), and stops. */
export async function serveEngine(engine: OddsEngine, clock: Clock, board: Board, dbPath: string): Promise<Served> {
  const app = await startApp({ clock, board, engine, dbPath, port: 0, env: {}, log: () => {} });
  try {
    return await fetchServed(app.port, engine.seq);
  } finally {
    await app.close();
  }
}

export async function fetchServed(port: number, seq: number): Promise<Served> {
  const replies: HttpReply[] = [];
  for (const path of COMPARED_PATHS) {
    const reply = await httpRequest(port, path);
    assert.equal(reply.status, 200, `${path}: ${reply.body.toString().slice(0, 300)}`);
    replies.push(reply);
  }
  const first = JSON.parse(replies[1].body.toString()) as { meta?: { nextCursor?: string | null } };
  const cursor = first.meta?.nextCursor;
  if (typeof cursor === 'string') {
    const next = await httpRequest(port, `/api/v1/odds?limit=500&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(next.status, 200);
    replies.push(next);
  }
  return { seq, replies };
}

/** Every node served the same bytes and ETags at the same seq. */
export function assertSameServed(reference: Served, other: Served, who: string): void {
  assert.equal(other.seq, reference.seq, `${who}: seq`);
  assert.equal(other.replies.length, reference.replies.length, `${who}: pages`);
  reference.replies.forEach((reply, i) => {
    const path = COMPARED_PATHS[i] ?? '/api/v1/odds (page 2)';
    assert.equal(other.replies[i].headers.etag, reply.headers.etag, `${who}: ETag of ${path}`);
    assert.ok(other.replies[i].body.equals(reply.body), `${who}: ${path} differs (${other.replies[i].body.length} vs ${reply.body.length} bytes)`);
  });
}
