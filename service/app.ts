// The composition root: one process holding the engine (hot board), persistence
// (cold data, keys, usage), every listener of the engine's changes, and the
// uWebSockets.js facade over them. Everything the process runs is built here, in the
// order it starts, and close() stops it in the reverse order; the route modules only
// read what is built (http/routes/services.ts). main.ts starts it from the
// environment; tests start it on an ephemeral port over a small board. The settings it
// reads from `env` are parsed by service/config.ts, like main's.
import { ReplayWindow } from '../ingest/replayWindow.ts';
import { registerArchiveMetrics } from './archiveMetrics.ts';
import { BoardMembership } from '../engine/boardMembership.ts';
import type { Clock } from '../engine/clock.ts';
import type { OddsEngine } from '../engine/engine.ts';
import type { Board } from '../engine/model.ts';
import { EngineSignals } from '../engine/signals/engineSignals.ts';
import { DEFAULT_STEAM_CONFIG } from '../engine/signals/screenRecords.ts';
import { SignalTopics } from '../engine/stream/signalTopics.ts';
import { buildSignalStream, SIGNAL_STREAM_SCHEMAS } from '../http/routes/signalStream.ts';
import { Simulator } from '../fixtures/simulator.ts';
import { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import { KeyAuthenticator } from '../http/auth.ts';
import { CursorCodec } from '../http/cursor.ts';
import { HttpMetrics } from '../http/metrics.ts';
import { buildRoutes } from '../http/routes/index.ts';
import { buildStream } from '../http/routes/stream.ts';
import { STREAM_OPENAPI_SCHEMAS } from '../http/asyncapi.ts';
import type { Services } from '../http/routes/services.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { readConfig, type Config } from './config.ts';
import { setCompressionThreads } from '../engine/snapshot/compressionWorkers.ts';
import type { StreamHub } from '../engine/stream/streamHub.ts';
import { feedChanges } from '../ingest/engineFeed.ts';
import type { Persistence } from '../persistence/persistence.ts';
import type { StartBoard } from './boardStart.ts';
import type { DurableStart } from './durableStart.ts';
import { openServedBoard, type ServedBoard } from './servedBoard.ts';
import type { Storage } from '../persistence/log/storage.ts';
import type { ReplicatedStart } from './replicatedStart.ts';
import { EngineListeners } from './engineListeners.ts';
import { EventStatusWriter } from './eventStatusWriter.ts';
import { startFeed } from '../feeds/startFeed.ts';
import { registerFlaggedBooks } from './flaggedBooks.ts';
import { IngestError, type Ingest } from '../ingest/ingest.ts';
import { createLogger, type Logger } from './logger.ts';
import { Operations } from './operations.ts';
import { Alerts } from '../alerts/alerts.ts';
import { AlertsGate, alertsAdminRoutes } from '../alerts/adminRoutes.ts';
import { readAlertsConfig } from '../alerts/alertsConfig.ts';
import { registerAlertsMetrics } from '../alerts/alertsMetrics.ts';
import { mcpRoute } from '../mcp/httpRoute.ts';
import { WritePathHealth } from './writePathHealth.ts';
import { StartTimeline } from './startTimeline.ts';
import { registerBoardMetrics, registerStreamMetrics, UpdateCounter, WritePathMetrics } from './serviceMetrics.ts';

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
  /** Where the settings are read (DB_PATH, RATE_LIMIT_ENFORCE, REQUIRE_KEY, CURSOR_SECRET, ACCESS_LOG, LOG_LEVEL), through readConfig; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The write path of `engine`; with FEED=the-odds-api in env, the feed submits through it in process. */
  ingest?: Ingest;
  /** Where 500s are logged as text (tests collect them); default: the structured logger. */
  log?: (line: string, fields?: { requestId: string }) => void;
  /** Structured log (default: pino on stdout at LOG_LEVEL). */
  logger?: Logger;
  /** Metrics registry and readiness checks (served on the ingest port with a data dir, probes on the public port too); default: new ones. */
  operations?: Operations;
  /** Print the progress of generating, loading or restoring the board (service/progress.ts); default off. */
  progress?: boolean;
  /**
   * With dataDir: called once the ingest listener listens (its /healthz, /readyz and
   * /metrics answer from then on), before the board is restored or loaded; the start
   * waits for it. main.ts logs the port here, before the load.
   */
  ingestListening?: (port: number) => void | Promise<void>;
  /** With dataDir: where the log and the checkpoints write (default node:fs); tests pass a fault seam (persistence/log/storageFaults.ts). */
  storage?: Storage;
}

export interface App {
  config: Config;
  engine: OddsEngine;
  operations: Operations;
  httpMetrics: HttpMetrics;
  /** /snapshot's bodies (its first version is built in the background once the server listens). */
  snapshot: BoardSnapshot;
  /** The push stream's hub (its stats() for tests and health). */
  stream: StreamHub;
  persistence: Persistence;
  simulator: Simulator;
  server: RunningServer;
  board: Board;
  port: number;
  /** The durable board and its ingest listener; null without a data dir. */
  durable: DurableStart | null;
  /** With LOG=nats: the writer or the replica of the JetStream stream (service/replicatedStart.ts); else null. */
  replicated: ReplicatedStart | null;
  /** Webhook alerts (alerts/): with a data dir unless ALERTS=0; else null. */
  alerts: Alerts | null;
  /** The signal books (edges, arbitrage, the trader screens, steam) the routes and streams read. */
  signals: EngineSignals;
  /** The start's phases and how long each took (the ready line's `phases`). */
  startTimeline: StartTimeline;
  close(): Promise<void>;
}

/**
 * The write path's metrics and log lines: every batch counted by way in and outcome
 * (acknowledgement latency of the ok ones), every fsync and checkpoint timed, the
 * restore reported; a refused batch logged as a summary (how many changes, which error
 * codes, the first bad index) without its payload, and a failing log as an error.
 */
function watchWritePath(durable: DurableStart, operations: Operations, logger: Logger): void {
  const board = durable.durable;
  // a feed stuck on a bad change refuses every batch it sends: at most LINES_PER_SECOND
  // lines a second, the next line saying how many were left out
  const LINES_PER_SECOND = 10;
  let windowStart = 0;
  let inWindow = 0;
  let suppressed = 0;
  const admit = (): number | null => {
    const now = performance.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      inWindow = 0;
    }
    if (++inWindow > LINES_PER_SECOND) {
      suppressed++;
      return null;
    }
    const left = suppressed;
    suppressed = 0;
    return left;
  };
  const metrics = new WritePathMetrics(operations.registry, board.ingest.appliedByKind, durable.mode === 'restored' ? board.restore : null);
  if (durable.firstCheckpoint !== null) metrics.checkpointWritten(durable.firstCheckpoint);
  board.onCheckpoint = (report) => metrics.checkpointWritten(report);
  // the durable board writes the line itself (its warn); here: the metric
  board.onCheckpointFailed = metrics.checkpointFailed;
  board.log.onFsync = metrics.fsynced;
  // a failed fsync stops the log until a restart: /readyz, a gauge and one line say so
  const health = new WritePathHealth(operations, logger);
  board.log.onStopped = (stopped) =>
    health.failed({
      since: stopped.since,
      error: stopped.error,
      what: stopped.during === 'fsync' ? `the fsync of log segment ${stopped.file} failed (never retried)` : `cutting a failed write off log segment ${stopped.file} failed`,
      durableIndex: stopped.durableIndex,
    });
  board.ingest.onStopped = (stopped) =>
    health.failed({ since: stopped.since, error: stopped.error, what: 'applying a logged batch to the board failed (an internal error; batches are answered 503 ingest_failed)', durableIndex: stopped.appliedIndex });
  board.ingest.onBatch = (via, outcome, seconds, changes, error) => {
    metrics.batchDone(via, outcome, seconds);
    if (outcome === 'ok') return;
    const leftOut = admit();
    if (leftOut === null) return;
    if (outcome === 'invalid' && error instanceof IngestError) {
      const codes: Record<string, number> = {};
      for (const e of error.errors) codes[e.code] = (codes[e.code] ?? 0) + 1;
      const first = error.errors[0];
      logger.warn(
        { event: 'ingest_invalid_batch', via, changes, invalid: new Set(error.errors.map((e) => e.index)).size, codes, first: first === undefined ? null : { index: first.index, code: first.code, field: first.field }, linesLeftOut: leftOut },
        'ingest batch refused: invalid changes, nothing applied',
      );
    } else if (outcome === 'error') {
      const code = error instanceof IngestError ? error.code : 'internal_error';
      logger.error({ event: 'ingest_failed', via, changes, code, detail: error instanceof Error ? error.message : String(error), linesLeftOut: leftOut }, 'ingest batch not acknowledged: the write path could not take it');
    }
  };
}

/**
 * What a start has opened so far, in order. A step that fails part way (a stray
 * directory where the ingest address file goes, a feed that cannot start) closes them
 * in reverse, so the failed start leaves no listener, delivery thread, timer or open
 * file behind and the process can exit with its error.
 */
class OpenedParts {
  private readonly parts: { name: string; close: () => unknown }[] = [];
  /** Told of a part that failed to close (the others are still closed). */
  failed: (name: string, error: unknown) => void = () => {};

  add(name: string, close: () => unknown): void {
    this.parts.push({ name, close });
  }

  async closeAll(): Promise<void> {
    for (const part of this.parts.reverse()) {
      try {
        await part.close();
      } catch (error) {
        this.failed(part.name, error);
      }
    }
  }
}

/** The longest one background step of the signal books' evaluation holds the event loop (ms). */
const SIGNAL_BOOKS_STEP_MS = 8;

export async function startApp(options: AppOptions): Promise<App> {
  const opened = new OpenedParts();
  try {
    return await openApp(options, opened);
  } catch (error) {
    await opened.closeAll();
    throw error;
  }
}

async function openApp(options: AppOptions, opened: OpenedParts): Promise<App> {
  const timeline = new StartTimeline();
  const config = readConfig(options.env ?? process.env);
  const clock = options.clock;
  const logger = options.logger ?? createLogger(config.logLevel, undefined, config.logFormat);
  opened.failed = (part, error) => logger.error({ event: 'start_cleanup_failed', part, detail: String(error) }, 'closing a part of a failed start failed');
  const log = options.log ?? ((line: string, fields?: { requestId: string }) => logger.error(fields ?? {}, line));
  const operations = options.operations ?? new Operations();
  operations.readiness.expect('board', 'loading the board');
  // the webhook admin API is on the ingest listener, which opens before the board loads
  const alertsGate = new AlertsGate();
  // The signal books: built on a restored engine before the log after its checkpoint
  // replays (the steam detector takes its saved state and follows every replayed batch,
  // so /steam is what the writer listed at the same board seq), else on the loaded board.
  // Lazy: the arbitrage and edge books are evaluated once the service is ready, in steps
  // (below), or by their first read, whichever comes first (EngineSignals.buildStep).
  const buildSignals = (on: OddsEngine) =>
    new EngineSignals(
      on,
      {},
      {
        sharpBooks: config.fairLineBooks,
        steam: { ...DEFAULT_STEAM_CONFIG, unit: config.steamThreshold.unit, threshold: config.steamThreshold.threshold, windowMs: config.steamWindowMs },
      },
      { lazy: true },
    );
  let restoredSignals: EngineSignals | null = null;
  const served = await openServedBoard({
    ...options,
    restored: (restoredEngine) => {
      restoredSignals = buildSignals(restoredEngine);
    },
    env: options.env ?? process.env,
    log,
    config,
    operationsRoutes: operations.ingestPortRoutes(),
    adminRoutes: alertsAdminRoutes(alertsGate),
    listening: options.ingestListening,
    timeline,
  });
  const { engine, board, persistence, durable, replicated, keyChecker } = served;
  // first in, so given back last: a second process may take the DATA_DIR lock the moment it is
  // released, so every file in DATA_DIR (log, checkpoints, alerts.db, odds.db) is closed before
  opened.add('data dir lock', () => served.releaseDataDir());
  opened.add('persistence', () => persistence.close());
  // no last checkpoint for a start that failed: the log holds what the board has
  opened.add('durable board', () => durable?.abandon());
  opened.add('replicated board', () => replicated?.close());
  if (replicated !== null) timeline.mark('replicated start');
  if (durable !== null) watchWritePath(durable, operations, logger);
  if (replicated !== null) operations.readiness.probe(replicated.role, replicated.readiness);
  if (replicated?.role === 'writer') replicated.onWritePathStopped(new WritePathHealth(operations, logger).failed);

  // Every listener of the engine's changes, in the order the engine calls them; close()
  // stops them in reverse. The root subscribes the small ones; the snapshot and the
  // signal books subscribe themselves when built, and the list owns their close().
  const listeners = new EngineListeners(engine);
  opened.add('engine listeners', () => listeners.close());
  const authenticator = new KeyAuthenticator(keyChecker, { requireKey: config.requireKey });
  // The push stream (WebSocket and SSE) first: its deltas leave at the end of an apply,
  // before the other listeners' work (signal books, snapshot), none of which it reads.
  // the replay window (docs/archive.md): the delta feed and stream resumes past the board's tombstones, from the archive
  const replay = durable?.archive != null && config.replayWindowHours > 0 ? new ReplayWindow(engine, durable.archive, config.replayWindowHours * 3_600_000, () => clock.now()) : null;
  const stream = buildStream(engine, {
    replay,
    bufferCapBytes: config.streamBufferBytes,
    secret: config.cursorSecret || 'odds-stream-clock',
    resumeWaitMs: config.streamResumeWaitMs,
    maxSubscriptions: config.streamMaxSubscriptions,
    maxAnonymousPerAddress: config.streamMaxAnonymousConnections,
    authenticator,
    clock,
  });
  listeners.subscribe('push stream', stream.hub, (hub) => hub.close());
  registerStreamMetrics(operations.registry, stream.hub);
  if (durable?.archive != null) registerArchiveMetrics(operations.registry, durable.archive);
  stream.hub.onSlowConsumer = (queuedBytes, subscriptions) =>
    logger.warn({ event: 'stream_slow_consumer', queuedBytes, subscriptions, capBytes: config.streamBufferBytes }, 'a push-stream client left too much unread and was disconnected (slow_consumer)');
  const statusWriter = listeners.subscribe('event status writer', new EventStatusWriter(engine, persistence, clock), (writer) => writer.close());
  const membership = listeners.subscribe('board membership', new BoardMembership(engine));
  timeline.mark('listeners');
  if (config.snapshotCompressionThreads !== null) setCompressionThreads(config.snapshotCompressionThreads);
  const snapshot = listeners.own('board snapshot', new BoardSnapshot(engine, { clock, maxAgeMs: config.snapshotMaxAgeMs === 0 ? Infinity : config.snapshotMaxAgeMs }));
  // (a restored start's books move behind the listeners subscribed above)
  const signals = listeners.own('signal books', (restoredSignals as EngineSignals | null)?.resubscribed() ?? buildSignals(engine));
  timeline.mark('signal books');
  registerFlaggedBooks(signals, operations.registry, operations.readiness);
  // the signal stream's topics follow the signal books (steam moves, changed screens)
  const signalTopics = new SignalTopics(signals, () => engine.asOf());
  // its SSE and WebSocket doors, held to the push stream's per-connection limits
  const signalStream = buildSignalStream({ topics: signalTopics, anonymous: stream.anonymous, bufferCapBytes: config.streamBufferBytes, maxSubscriptions: config.streamMaxSubscriptions, authenticator, clock });
  // Webhook alerts, with a durable board or on a LOG=nats writer (the outbox lives in
  // its data dir; replicas apply the same changes and send none): the producer follows
  // the engine after the signal books, which it reads on its tick.
  const writes = durable !== null || replicated?.role === 'writer';
  const alertsConfig = writes && options.dataDir !== undefined ? readAlertsConfig(options.env ?? process.env, options.dataDir) : null;
  let alerts: Alerts | null = null;
  // the delivery thread starts now and boots on another core while the public listener
  // starts (awaited after the listener instead, it took 2.4-2.9 s of the start on the
  // loaded 2-core machine); the start waits for it below
  let alertsStarting: Promise<unknown> = Promise.resolve(null);
  if (alertsConfig?.enabled === true) {
    const alertsLogger = logger.child({ part: 'alerts' });
    alerts = new Alerts(engine, signals, clock, alertsConfig, (level, fields, line) => alertsLogger[level](fields, line));
    listeners.subscribe('alert producer', alerts.producer);
    registerAlertsMetrics(operations.registry, alerts);
    alertsStarting = alerts.start().then(() => null, (error: unknown) => error ?? new Error('the webhook delivery thread failed to start'));
    // closed on a failed start once its start has settled (a thread left booting would keep the process alive)
    opened.add('webhook alerts', async () => {
      await alertsStarting;
      await alerts?.close();
    });
  } else alertsGate.shut(alertsConfig !== null ? 'ALERTS=0' : replicated !== null ? 'webhooks run on the LOG=nats writer, not on a replica' : 'the service runs without DATA_DIR');
  const updates = listeners.subscribe('update counter', new UpdateCounter());
  registerBoardMetrics(operations.registry, engine, updates, snapshot);
  const httpMetrics = new HttpMetrics(operations.registry, {
    accessLog: config.accessLog
      ? (request, seconds) =>
          logger.info({ requestId: request.requestId, method: request.method.toUpperCase(), path: request.url, query: request.rawQuery, status: request.status, ms: Math.round(seconds * 1e6) / 1e3 }, 'request')
      : null,
  });

  const services: Services = {
    engine,
    persistence,
    clock,
    keyChecker,
    cursors: new CursorCodec(config.cursorSecret),
    membership,
    snapshot,
    signals,
    syncEvents: () => statusWriter.flush(),
    archive: durable?.archive ?? null,
    replay,
  };
  // The snapshot's first version is built in the background, in steps between the
  // requests (compression on the worker threads), starting while the server begins to
  // listen: it held the start for the whole build before (large board: ~5 s; medium on
  // the loaded 2-core machine: 6-7 s). A /snapshot request that arrives before it is
  // published waits for it (http/routes/snapshot.ts), so even the first one is answered
  // with the whole board as it is then; every other route answers at once.
  const firstSnapshotStarted = performance.now();
  snapshot.whenCurrent(false).then(
    (body) =>
      logger.info(
        { event: 'snapshot_built', rows: body.count, bytes: body.byteLength, ms: Math.round(performance.now() - firstSnapshotStarted) },
        `the snapshot's first version is built in the background (${body.count.toLocaleString('en-US')} rows, ${(body.byteLength / 1048576).toFixed(1)} MiB gzip, ${((performance.now() - firstSnapshotStarted) / 1000).toFixed(1)}s)`,
      ),
    (error: unknown) => logger.error({ event: 'snapshot_build_failed', err: error }, "building the snapshot's first version failed: the next /snapshot request starts it again"),
  );
  // POST /mcp: the MCP server for agents (mcp/), whose tools read this port's API
  let publicPort = 0;
  const server = await createServer({
    routes: [...buildRoutes(services), ...operations.probeRoutes(), ...stream.routes, ...signalStream.routes, mcpRoute(() => publicPort, options.env ?? process.env)],
    sockets: [...stream.sockets, ...signalStream.sockets],
    openapi: { schemas: { ...STREAM_OPENAPI_SCHEMAS, ...SIGNAL_STREAM_SCHEMAS } },
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    authenticator,
    clock,
    log,
    observer: httpMetrics,
    boardSeq: () => engine.seq,
    reusePort: config.reusePort,
    uwsDirect: config.uwsDirect,
    trustedProxies: config.trustedProxies,
  });
  publicPort = server.port;
  opened.add('public server', () => server.close());
  timeline.mark('public listener');
  operations.readiness.pass('board');

  if (alerts !== null) {
    // the delivery thread opens alerts.db and reports the subscriptions the producer follows
    const failed = await alertsStarting;
    if (failed !== null) throw failed;
    alertsGate.open(alerts);
    timeline.mark('alerts thread');
  }
  if (durable !== null) await durable.listen();
  if (replicated !== null) await replicated.listen();
  timeline.mark('write path open');
  // the write path in this process: the durable board's, the replicated writer's; a replica has none
  const writePath = durable?.durable.ingest ?? replicated?.ingest ?? null;
  // a logged batch's apply (and its steam events) waits for at most one short snapshot step
  if (writePath !== null) snapshot.urgent = () => writePath.inFlightCount > 0;

  // on a durable board the simulator's batches go through the write path like a feed's
  const simulator = new Simulator(engine, clock, {
    ratePerSecond: options.simulatorRate ?? 0,
    seed: options.simulatorSeed ?? board.options.seed,
    submit: writePath === null ? undefined : (batch) => writePath.submit(feedChanges(engine, batch)).then((result) => result.applied),
    warn: log,
  });
  opened.add('simulator', () => simulator.stop());
  // a replica's board moves only with the stream
  if ((options.simulatorRate ?? 0) > 0 && replicated?.role !== 'replica') simulator.start();
  // a feed in the process (FEED=the-odds-api) submits through the durable board's write path
  const feedIngest = options.ingest ?? writePath ?? undefined;
  const feedLogger = logger.child({ feed: config.feed });
  const feed = feedIngest === undefined ? null : startFeed(feedIngest, config, (line) => feedLogger.info(line), operations);
  if (config.feed !== null && feedIngest === undefined) feedLogger.warn('FEED is set but the board has no write path (no DATA_DIR): the feed does not run');

  let closed = false;
  // The signal books' arbitrage and edges, left by the lazy build, evaluated in short
  // steps between requests (a read of them before the end evaluates the rest at once, so
  // no answer is partial); a `signal_books_built` line says when they are whole.
  if (signals.unevaluatedGroups > 0) {
    const booksStarted = performance.now();
    const groups = signals.unevaluatedGroups;
    const step = (): void => {
      if (closed) return;
      if (!signals.buildStep(performance.now() + SIGNAL_BOOKS_STEP_MS)) {
        setImmediate(step);
        return;
      }
      const ms = Math.round(performance.now() - booksStarted);
      logger.info({ event: 'signal_books_built', groups, ms }, `the signal books (arbitrage, edges) are evaluated in the background (${groups.toLocaleString('en-US')} market groups, ${(ms / 1000).toFixed(1)}s)`);
    };
    setImmediate(step);
  }
  return {
    config,
    engine,
    operations,
    httpMetrics,
    snapshot,
    stream: stream.hub,
    persistence,
    simulator,
    server,
    board,
    port: server.port,
    durable,
    replicated,
    alerts,
    signals,
    startTimeline: timeline,
    async close() {
      if (closed) return;
      closed = true;
      // the poll in flight finishes before the write path closes
      await feed?.stop();
      operations.readiness.fail('shutdown', 'the process is shutting down');
      simulator.stop();
      // both ports keep serving (readiness: 503) while load balancers notice
      if (config.shutdownGraceMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownGraceMs));
      try {
        await durable?.close();
        await replicated?.close();
      } finally {
        await server.close();
      }
      alertsGate.shut('the process is shutting down');
      try {
        await alerts?.close();
      } finally {
        try {
          listeners.close();
        } finally {
          try {
            persistence.close();
          } finally {
            // last, once every file in DATA_DIR is closed (log, checkpoints, alerts.db, odds.db)
            served.releaseDataDir();
          }
        }
      }
    },
  };
}
