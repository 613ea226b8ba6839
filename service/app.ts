// The composition root: one process holding the engine (hot board), persistence
// (cold data, keys, usage), every listener of the engine's changes, and the
// uWebSockets.js facade over them. Everything the process runs is built here, in the
// order it starts, and close() stops it in the reverse order; the route modules only
// read what is built (http/routes/services.ts). main.ts starts it from the
// environment; tests start it on an ephemeral port over a small board.
import { BoardMembership } from '../engine/boardMembership.ts';
import type { Clock } from '../engine/clock.ts';
import { OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { Board, BoardOptions } from '../engine/model.ts';
import { EngineSignals } from '../engine/signals/engineSignals.ts';
import { Simulator } from '../engine/simulator.ts';
import { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { KeyAuthenticator } from '../http/auth.ts';
import { CursorCodec } from '../http/cursor.ts';
import { buildRoutes } from '../http/routes/index.ts';
import { buildStream } from '../http/routes/stream.ts';
import { STREAM_OPENAPI_SCHEMAS } from '../http/asyncapi.ts';
import type { Services } from '../http/routes/services.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { openPersistence, type Persistence } from '../persistence/persistence.ts';
import type { StreamHub } from '../engine/stream/streamHub.ts';
import { EngineListeners } from './engineListeners.ts';
import { EventStatusWriter } from './eventStatusWriter.ts';

export interface AppOptions {
  clock: Clock;
  board: BoardOptions | Board;
  /** A board restored elsewhere (from DATA_DIR): served as it is, without loading `board` or its cold data. */
  engine?: OddsEngine;
  /** SQLite file (default DB_PATH, else ./data/odds.db). */
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
  /** The push stream's hub (its stats() for tests and health). */
  stream: StreamHub;
  persistence: Persistence;
  simulator: Simulator;
  server: RunningServer;
  board: Board;
  port: number;
  close(): Promise<void>;
}

function isBoard(value: BoardOptions | Board): value is Board {
  return typeof (value as Board).forEachOdds === 'function';
}

export async function startApp(options: AppOptions): Promise<App> {
  const env = options.env ?? process.env;
  const clock = options.clock;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const board = isBoard(options.board) ? options.board : generateBoard(options.board);
  const engine = options.engine ?? new OddsEngine(clock);
  if (options.engine === undefined) loadBoard(engine, board);

  const persistence = openPersistence({ path: options.dbPath, env });
  if (options.engine === undefined) persistence.loadCold(board, { eventsWithOdds: new Set(engine.eventIdsWithLiveRows()) });

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
  const authenticator = new KeyAuthenticator(persistence.keyChecker, { requireKey: env.REQUIRE_KEY === '1' });
  // The push stream (WebSocket and SSE): a listener like the others, last, so it sends what they already settled.
  const stream = buildStream(engine, { env, restored: options.engine !== undefined, authenticator, clock });
  listeners.subscribe('push stream', stream.hub, (hub) => hub.close());
  const server = await createServer({
    routes: [...buildRoutes(services), ...stream.routes],
    sockets: stream.sockets,
    openapi: { schemas: STREAM_OPENAPI_SCHEMAS },
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    authenticator,
    clock,
    log,
  });

  const simulator = new Simulator(engine, clock, {
    ratePerSecond: options.simulatorRate ?? 0,
    seed: options.simulatorSeed ?? board.options.seed,
  });
  if ((options.simulatorRate ?? 0) > 0) simulator.start();

  let closed = false;
  return {
    engine,
    stream: stream.hub,
    persistence,
    simulator,
    server,
    board,
    port: server.port,
    async close() {
      if (closed) return;
      closed = true;
      simulator.stop();
      await server.close();
      try {
        listeners.close();
      } finally {
        persistence.close();
      }
    },
  };
}
