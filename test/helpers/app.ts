// Starts the real process composition (service/app.ts startApp) for HTTP tests: a
// generated board (small by default), a ManualClock frozen at NOW, a SQLite file in a
// fresh temp dir and an ephemeral port, served on the transport TRANSPORT names (test/run.ts
// runs every HTTP test file on both); plus a client whose every reply is validated
// against the OpenAPI document the app itself serves (test/helpers/server.ts).
//
//   const t = await startTestApp();                 // small board, simulator off
//   const { reply, body } = await t.call('/api/v1/odds', '/api/v1/odds?league=nba');
//   t.app.engine / t.app.simulator / t.clock        // the real parts, for oracles
//   await t.close();                                // server, DB, temp dir
//   await startTestApp({ dataDir: true });          // durable (log, checkpoints) in a temp DATA_DIR, ingest listener on an ephemeral port
import type { Storage } from '../../persistence/log/storage.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../engine/clock.ts';
import type { Board, BoardSize } from '../../engine/model.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { startApp, type App } from '../../service/app.ts';
import { httpRequest, loadValidator, type ApiValidator, type HttpReply, type RequestOptions } from './server.ts';

import { NOW } from '../../fixtures/harness/now.ts';

/** The instant tests and benchmarks freeze the clock at. */
export { NOW };

export interface TestAppOptions {
  size?: BoardSize;
  seed?: number;
  /** Clock start (default NOW). */
  now?: number;
  /** Simulated updates per second, started at once (default 0: a still board). */
  simulatorRate?: number;
  simulatorSeed?: number;
  /** Environment seen by the app (default: empty, so the caller's env cannot leak in). */
  env?: NodeJS.ProcessEnv;
  /** Reuse an already generated board (generation is deterministic per seed/size/now). */
  board?: Board;
  /** Use this SQLite file (kept on close) instead of a fresh one in a temp dir: restarts on one database. */
  dbPath?: string;
  /**
   * Keep the board durable (service/durableStart.ts) in this DATA_DIR (kept on close), or
   * with true in a fresh temp dir (removed on close); the ingest listener then runs on an
   * ephemeral port. Default: no data dir, the board as before (no log, no ingest listener).
   */
  dataDir?: string | true;
  /** Where the log, the checkpoints and the tick archive write (default node:fs): a fault seam (persistence/log/storageFaults.ts). */
  storage?: Storage;
}

export interface TestApp {
  app: App;
  clock: ManualClock;
  port: number;
  api: ApiValidator;
  /** Lines the app logged (500s with their stacks): tests can assert there are none. */
  logs: string[];
  /** GET (or options.method) path and validate the reply against routePath's OpenAPI entry. */
  call(routePath: string, path: string, options?: RequestOptions): Promise<{ reply: HttpReply; body: any }>;
  /** Raw request without validation. */
  request(path: string, options?: RequestOptions): Promise<HttpReply>;
  close(): Promise<void>;
}

const boards = new Map<string, Board>();

/** Generated boards are kept per (size, seed, now) for the life of the test file. */
export function testBoard(size: BoardSize = 'small', seed = 42, now = NOW): Board {
  const key = `${size}:${seed}:${now}`;
  let board = boards.get(key);
  if (board === undefined) {
    board = generateBoard({ size, seed, now });
    boards.set(key, board);
  }
  return board;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const now = options.now ?? NOW;
  const clock = new ManualClock(now);
  const dir = options.dbPath === undefined ? mkdtempSync(join(tmpdir(), 'odds-app-')) : null;
  const ownDataDir = options.dataDir === true ? mkdtempSync(join(tmpdir(), 'odds-data-')) : null;
  const dataDir = ownDataDir ?? (options.dataDir as string | undefined);
  const board = options.board ?? testBoard(options.size ?? 'small', options.seed ?? 42, now);
  const logs: string[] = [];
  let app: App;
  try {
    app = await startApp({
      clock,
      board,
      dbPath: options.dbPath ?? join(dir!, 'odds.db'),
      dataDir,
      ingestPort: 0,
      host: '127.0.0.1',
      port: 0,
      simulatorRate: options.simulatorRate ?? 0,
      simulatorSeed: options.simulatorSeed,
      env: options.env ?? {},
      log: (line) => logs.push(line),
      storage: options.storage,
    });
  } catch (error) {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    if (ownDataDir !== null) rmSync(ownDataDir, { recursive: true, force: true });
    throw error;
  }
  const api = await loadValidator(app.port);
  return {
    app,
    clock,
    port: app.port,
    api,
    logs,
    async call(routePath, path, requestOptions = {}) {
      const reply = await httpRequest(app.port, path, requestOptions);
      const body = api.check(routePath, reply, requestOptions.method ?? 'GET');
      return { reply, body };
    },
    request: (path, requestOptions) => httpRequest(app.port, path, requestOptions),
    async close() {
      await app.close();
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
      if (ownDataDir !== null) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}
