// The composition root: one process holding the engine (hot board), persistence
// (cold data, keys, usage), every listener of the engine's changes, and the
// uWebSockets.js facade over them. Everything the process runs is built here, in the
// order it starts, and close() stops it in the reverse order; the route modules only
// read what is built (http/routes/services.ts). main.ts starts it from the
// environment; tests start it on an ephemeral port over a small board.
import { BoardMembership } from '../engine/boardMembership.ts';
import type { Clock } from '../engine/clock.ts';
import type { OddsEngine } from '../engine/engine.ts';
import type { Board } from '../engine/model.ts';
import { EngineSignals } from '../engine/signals/engineSignals.ts';
import { Simulator } from '../engine/simulator.ts';
import { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import { KeyAuthenticator } from '../http/auth.ts';
import { CursorCodec } from '../http/cursor.ts';
import { buildRoutes } from '../http/routes/index.ts';
import type { Services } from '../http/routes/services.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { feedChanges } from '../ingest/engineFeed.ts';
import type { Persistence } from '../persistence/persistence.ts';
import { openServedBoard, type DurableStart, type StartBoard } from './durableStart.ts';
import { EngineListeners } from './engineListeners.ts';
import { EventStatusWriter } from './eventStatusWriter.ts';

export interface AppOptions {
  clock: Clock;
  /** The fixture board (options or generated), or 'none' for an empty one; with dataDir only loaded when DATA_DIR is empty. */
  board: StartBoard;
  /** A board restored elsewhere (from DATA_DIR): served as it is, without loading `board` or its cold data. */
  engine?: OddsEngine;
  /** DATA_DIR: the board is durable there (restore, write-ahead log, checkpoints, ingest listener; see durableStart.ts). Without: no log. */
  dataDir?: string;
  /** The ingest listener's port with dataDir (default INGEST_PORT, else 8081; 0 = ephemeral). */
  ingestPort?: number;
  /** SQLite file (default DB_PATH, else DATA_DIR/odds.db with a data dir, else ./data/odds.db). */
  dbPath?: string;
  host?: string;
  /** 0 = ephemeral. */
  port?: number;
  /** Simulated updates per second; 0 leaves the board still. */
  simulatorRate?: number;
  simulatorSeed?: number;
  /** Where the settings are read (DB_PATH, RATE_LIMIT_ENFORCE, REQUIRE_KEY, CURSOR_SECRET); default process.env. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface App {
  engine: OddsEngine;
  persistence: Persistence;
  simulator: Simulator;
  server: RunningServer;
  board: Board;
  port: number;
  /** The durable board and its ingest listener; null without a data dir. */
  durable: DurableStart | null;
  close(): Promise<void>;
}

export async function startApp(options: AppOptions): Promise<App> {
  const env = options.env ?? process.env;
  const clock = options.clock;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { engine, board, persistence, durable } = await openServedBoard({ ...options, env, log });

  // Every listener of the engine's changes, in the order the engine calls them; close()
  // stops them in reverse. The root subscribes the two small ones; the snapshot and the
  // signal books subscribe themselves when built, and the list owns their close().
  const listeners = new EngineListeners(engine);
  const statusWriter = listeners.subscribe('event status writer', new EventStatusWriter(engine, persistence, clock), (writer) => writer.close());
  const membership = listeners.subscribe('board membership', new BoardMembership(engine, clock));
  const snapshot = listeners.own('board snapshot', new BoardSnapshot(engine, { clock }));
  // The first build, before the server listens (large board: ~5 s): the first client
  // is answered at once and no build runs behind later traffic.
  snapshot.current(false);
  const signals = listeners.own('signal books', new EngineSignals(engine));

  const services: Services = {
    engine,
    persistence,
    clock,
    cursors: new CursorCodec(env.CURSOR_SECRET),
    membership,
    snapshot,
    signals,
    syncEvents: () => statusWriter.flush(),
  };
  const server = await createServer({
    routes: buildRoutes(services),
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    authenticator: new KeyAuthenticator(persistence.keyChecker, { requireKey: env.REQUIRE_KEY === '1' }),
    clock,
    log,
  });

  if (durable !== null) await durable.listen();

  // on a durable board the simulator's batches go through the write path like a feed's
  const simulator = new Simulator(engine, clock, {
    ratePerSecond: options.simulatorRate ?? 0,
    seed: options.simulatorSeed ?? board.options.seed,
    submit: durable === null ? undefined : (batch) => durable.durable.ingest.submit(feedChanges(engine, batch)).then((result) => result.applied),
    warn: log,
  });
  if ((options.simulatorRate ?? 0) > 0) simulator.start();

  let closed = false;
  return {
    engine,
    persistence,
    simulator,
    server,
    board,
    port: server.port,
    durable,
    async close() {
      if (closed) return;
      closed = true;
      simulator.stop();
      try {
        await durable?.close();
      } finally {
        await server.close();
      }
      try {
        listeners.close();
      } finally {
        persistence.close();
      }
    },
  };
}
