// The composition root: one process holding the engine (hot board), persistence
// (cold data, keys, usage) and the uWebSockets.js facade over both. main.ts starts it
// from the environment; tests start it on an ephemeral port over a small board.
import type { Clock } from '../engine/clock.ts';
import { OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { Board, BoardOptions } from '../engine/model.ts';
import { Simulator } from '../engine/simulator.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { openPersistence, type Persistence } from '../persistence/persistence.ts';
import { EventStatusWriter } from './eventStatusWriter.ts';
import { buildRoutes } from './routes/index.ts';
import type { AppContext } from './routes/context.ts';
import { createServer, type RunningServer } from './server.ts';

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
  close(): Promise<void>;
}

function isBoard(value: BoardOptions | Board): value is Board {
  return typeof (value as Board).forEachOdds === 'function';
}

export async function startApp(options: AppOptions): Promise<App> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const board = isBoard(options.board) ? options.board : generateBoard(options.board);
  const engine = options.engine ?? new OddsEngine(options.clock);
  if (options.engine === undefined) loadBoard(engine, board);

  const persistence = openPersistence({ path: options.dbPath, env });
  if (options.engine === undefined) persistence.loadCold(board, { eventsWithOdds: new Set(engine.eventIdsWithLiveRows()) });
  const statusWriter = new EventStatusWriter(engine, persistence, options.clock);
  engine.subscribe(statusWriter);

  const teardowns: Array<() => void> = [];
  const ctx: AppContext = {
    engine,
    persistence,
    clock: options.clock,
    env,
    syncEvents: () => statusWriter.flush(),
    onClose: (fn) => teardowns.push(fn),
  };
  const server = await createServer({
    routes: buildRoutes(ctx),
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    authenticator: persistence.authenticator,
    clock: options.clock,
    log,
  });

  const simulator = new Simulator(engine, options.clock, {
    ratePerSecond: options.simulatorRate ?? 0,
    seed: options.simulatorSeed ?? board.options.seed,
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
    async close() {
      if (closed) return;
      closed = true;
      simulator.stop();
      await server.close();
      for (const teardown of teardowns.reverse()) teardown();
      statusWriter.close();
      persistence.close();
    },
  };
}
