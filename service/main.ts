// `npm start`: the fixture board with the live simulator, kept durable in DATA_DIR
// (default ./data: a restart restores the board instead of generating it again) with
// the ingest listener on INGEST_HOST:INGEST_PORT (service/durableStart.ts; it also
// serves /metrics, /healthz and /readyz, from before the board is loaded) and the public
// API on PORT (with /healthz and /readyz).
// Every setting comes from the environment through service/config.ts, checked before
// anything starts; `npm start -- --help` lists them with their defaults. Notable events
// are JSON lines on stdout (service/logger.ts); progress bars go to stderr.
import { ManualClock, SystemClock, type Clock } from '../engine/clock.ts';
import { startApp } from './app.ts';
import { ConfigError, helpText, readConfig, type Config } from './config.ts';
import { createLogger, loggableConfig } from './logger.ts';

function configOrExit(): Config {
  try {
    return readConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`odds-engine: cannot start: bad settings\n${error.message}\nrun \`npm start -- --help\` for every setting and what it allows\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(helpText());
    return;
  }
  const config = configOrExit();
  const logger = createLogger(config.logLevel);
  const started = performance.now();
  logger.info({ event: 'start', pid: process.pid, config: loggableConfig(config) }, 'starting');

  if (process.env.METRICS_PORT || process.env.METRICS_HOST) {
    logger.warn({ event: 'retired_setting', names: ['METRICS_PORT', 'METRICS_HOST'] }, 'METRICS_PORT and METRICS_HOST are no longer read: /metrics, /healthz and /readyz are served on the ingest port (INGEST_HOST:INGEST_PORT)');
  }

  const clock: Clock = config.now === null ? new SystemClock() : new ManualClock(config.now);
  // Generated only when DATA_DIR holds no board yet (a restart restores instead).
  const board = config.board === 'none' ? 'none' : { size: config.board, seed: config.seed, now: clock.now() };

  const app = await startApp({
    clock,
    board,
    dataDir: config.dataDir,
    // unset DB_PATH: the SQLite file lives in DATA_DIR beside the board it describes
    dbPath: process.env.DB_PATH ? config.dbPath : undefined,
    env: process.env,
    host: config.host,
    port: config.port,
    simulatorRate: config.simRate,
    simulatorSeed: config.seed,
    logger,
    progress: true,
    ingestListening: (port) => {
      logger.info({ event: 'ingest_listening', host: config.ingestHost, port }, `ingest listener on http://${config.ingestHost}:${port} (/metrics, /healthz, /readyz now; batches once the board is ready)`);
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const rows = `${app.engine.liveRows.toLocaleString('en-US')} live rows`;
  const startedFrom = app.durable ?? app.replicated;
  const mode = startedFrom?.mode ?? null;
  const what = mode === 'restored' ? `restored board (${rows})` : config.board === 'none' ? `empty board (${rows})` : `${config.board} board (seed ${config.seed}, ${rows})`;
  const durable = startedFrom === null ? '' : `; ${startedFrom.describe()}`;
  logger.info(
    { event: 'ready', board: config.board, seed: config.seed, mode, role: app.replicated?.role ?? null, seq: app.engine.seq, liveRows: app.engine.liveRows, seconds: Math.round(seconds * 10) / 10, port: app.port, ingestPort: app.durable?.listener.port ?? app.replicated?.listenerPort() ?? null, transport: app.server.transport },
    `${what} ready in ${seconds.toFixed(1)}s on http://${config.host}:${app.port}/api/v1/status; transport: ${app.server.transport}${durable}`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'shutdown', signal }, `${signal}: stopping`);
    app
      .close()
      .then(
        () => {
          logger.info({ event: 'stopped' }, 'stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ event: 'shutdown_failed', err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`odds-engine failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
