// `npm start`: the fixture board with the live simulator, kept durable in DATA_DIR
// (default ./data: a restart restores the board instead of generating it again) with
// the ingest listener on INGEST_HOST:INGEST_PORT (service/durableStart.ts; it also
// serves /metrics, /healthz and /readyz, from before the board is loaded) and the public
// API on PORT (with /healthz and /readyz).
// Every setting comes from the environment through service/config.ts, checked before
// anything starts; `npm start -- --help` lists them with their defaults. Notable events
// are JSON lines on stdout (service/logger.ts); progress bars go to stderr. A replica
// that falls behind its stream's retention is restarted here, in the same process.
import { ManualClock, SystemClock, type Clock } from '../engine/clock.ts';
import { createServer } from '../http/server.ts';
import { redactCredentials } from '../persistence/nats/natsUrl.ts';
import { startApp, type App, type AppOptions } from './app.ts';
import { ConfigError, helpText, readConfig, type Config } from './config.ts';
import { createLogger, loggableConfig, type Logger } from './logger.ts';
import { ensureSingleThreadedGc } from './singleThreadedGc.ts';

function configOrExit(): Config {
  try {
    return readConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`odds-engine: cannot start: bad settings\n${redactCredentials(error.message)}\nrun \`npm start -- --help\` for every setting and what it allows\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(helpText());
    return;
  }
  const config = configOrExit();
  // Before anything is opened: this may replace the process with itself plus a node flag.
  const gc = ensureSingleThreadedGc(config.singleThreadedGc);
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  const started = performance.now();
  logger.info({ event: 'start', pid: process.pid, singleThreadedGc: gc.kind === 'on', config: loggableConfig(config) }, `starting (pid ${process.pid}; board ${config.board}, data in ${config.dataDir}; \`npm start -- --help\` lists the settings)`);
  if (gc.kind === 'unavailable') {
    logger.warn({ event: 'single_threaded_gc_unavailable', detail: gc.reason }, `SINGLE_THREADED_GC wants node's --single-threaded-gc, but the process cannot relaunch itself with it (${gc.reason}): running with V8's collector threads; start node with the flag for steadier latency on one core`);
  }

  if (process.env.METRICS_PORT || process.env.METRICS_HOST) {
    logger.warn({ event: 'retired_setting', names: ['METRICS_PORT', 'METRICS_HOST'] }, 'METRICS_PORT and METRICS_HOST are no longer read: /metrics, /healthz and /readyz are served on the ingest port (INGEST_HOST:INGEST_PORT)');
  }

  const clock: Clock = config.now === null ? new SystemClock() : new ManualClock(config.now);
  // Generated only when DATA_DIR holds no board yet (a restart restores instead).
  const board = config.board === 'none' ? 'none' : { size: config.board, seed: config.seed, now: clock.now() };

  const options: AppOptions = {
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
  };
  let app = await startApp(options);

  let stopping = false;
  // an in-process restart under way (a replica re-bootstrapping); a stop waits for it
  let restarting: Promise<void> | null = null;
  // The handlers are in place before the ready line: a supervisor (or a test) that sends
  // SIGTERM as soon as it reads that line must get the clean stop, not the default action
  // (the kernel ending the process before the next statement registered them).
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'shutdown', signal }, `${signal}: stopping`);
    Promise.resolve(restarting)
      .then(() => app.close())
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
  // ms from the process's start to here: node itself and loading the modules
  logReady(logger, config, app, started, started);

  // A replica that fell behind the stream's retention cannot catch up from the stream:
  // the app is closed (listeners and servers, in reverse; /readyz says 503 during the
  // shutdown grace) and started again on the same ports and settings, so the board is
  // built exactly as a fresh replica's is: the newest checkpoint in the object store,
  // then the stream after it. Meanwhile both ports refuse connections.
  const watchRetention = (current: App) => {
    current.replicated?.onFellBehind((error) => {
      if (stopping) return;
      restarting = rebootstrap(current, error)
        .catch((failure: unknown) => {
          logger.error({ event: 'rebootstrap_failed', err: failure }, 're-bootstrap failed: exiting');
          process.exit(1);
        })
        .finally(() => (restarting = null));
    });
  };
  const rebootstrap = async (old: App, error: Error) => {
    logger.warn({ event: 'rebootstrap', detail: error.message }, 'the replica fell behind the stream\'s retention: restarting its board in process from the object store');
    const begun = performance.now();
    const ports = { port: old.port, ingestPort: old.replicated?.listenerPort() ?? config.ingestPort };
    await old.close();
    // uWebSockets.js sets SO_REUSEADDR only on a listener bound to a given port: after a
    // start on port 0 (ephemeral, as tests do), the connections the server closed hold
    // the port in TIME_WAIT for up to a minute and a new listener cannot take it. With a
    // configured port (PORT, INGEST_PORT) it re-listens at once, as node:http does. Wait
    // for both ports before loading the board, rather than load it for nothing.
    for (let waited = 0; !(await portsFree(config.host, ports.port, config.ingestHost, ports.ingestPort)); waited += 1000) {
      if (stopping) return;
      if (waited >= PORT_WAIT_MS) {
        logger.error({ event: 'rebootstrap_failed', port: ports.port, ingestPort: ports.ingestPort }, `the ports stayed busy for ${PORT_WAIT_MS / 1000}s after the close: exiting`);
        process.exit(1);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    for (let attempt = 1; ; attempt++) {
      if (stopping) return;
      try {
        app = await startApp({ ...options, ...ports });
        break;
      } catch (failure) {
        // retention may move on while the checkpoint loads (a very small stream): try again
        if (attempt === REBOOTSTRAP_ATTEMPTS) {
          logger.error({ event: 'rebootstrap_failed', err: failure }, `re-bootstrap failed ${attempt} times: exiting`);
          process.exit(1);
        }
        logger.warn({ event: 'rebootstrap_retry', attempt, detail: failure instanceof Error ? failure.message : String(failure) }, 're-bootstrap failed: trying again');
        await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      }
    }
    logReady(logger, config, app, begun, null);
    watchRetention(app);
  };
  watchRetention(app);

}

/** How many times an in-process re-bootstrap is tried before the process exits (a supervisor then restarts it). */
const REBOOTSTRAP_ATTEMPTS = 5;

/** How long a re-bootstrap waits for its ports to be free again. */
const PORT_WAIT_MS = 180_000;

/** Whether the transport can listen on both ports now (it listens and closes at once, with no connection). */
async function portsFree(host: string, port: number, ingestHost: string, ingestPort: number): Promise<boolean> {
  for (const [h, p] of [[host, port], [ingestHost, ingestPort]] as const) {
    try {
      await (await createServer({ routes: [], openapi: false, host: h, port: p })).close();
    } catch {
      return false;
    }
  }
  return true;
}

/** The address a person opens for a listener bound to host: any-address binds are reached as localhost. */
function browsableOrigin(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/**
 * The ready line: what was loaded, how long it took and in which phases (with `modulesMs`,
 * the process's start-up before main ran: node and loading the modules, which the
 * line's seconds do not include), and where to look: the live board, the API reference, the API.
 */
function logReady(logger: Logger, config: Config, app: App, started: number, modulesMs: number | null): void {
  const phases = modulesMs === null ? app.startTimeline.phases() : { modules: Math.round(modulesMs), ...app.startTimeline.phases() };
  const phasesText = Object.entries(phases).map(([phase, ms]) => `${phase} ${ms} ms`).join(', ');
  const seconds = (performance.now() - started) / 1000;
  const rows = `${app.engine.liveRows.toLocaleString('en-US')} live rows`;
  const startedFrom = app.durable ?? app.replicated;
  const mode = startedFrom?.mode ?? null;
  const what = mode === 'restored' ? `restored board (${rows})` : config.board === 'none' ? `empty board (${rows})` : `${config.board} board (seed ${config.seed}, ${rows})`;
  const durable = startedFrom === null ? '' : `; ${startedFrom.describe()}`;
  const origin = browsableOrigin(config.host, app.port);
  const urls = { boardUrl: `${origin}/`, docsUrl: `${origin}/docs`, apiUrl: `${origin}/api/v1` };
  logger.info(
    { event: 'ready', board: config.board, seed: config.seed, mode, role: app.replicated?.role ?? null, seq: app.engine.seq, liveRows: app.engine.liveRows, seconds: Math.round(seconds * 10) / 10, phases, port: app.port, ingestPort: app.durable?.listener.port ?? app.replicated?.listenerPort() ?? null, transport: app.server.transport, ...urls },
    `${what} ready in ${seconds.toFixed(1)}s: live board ${urls.boardUrl}, API reference ${urls.docsUrl}, API ${urls.apiUrl}; transport: ${app.server.transport}${durable}; start phases: ${phasesText}`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(redactCredentials(`odds-engine failed to start: ${error instanceof Error ? error.message : String(error)}\n`));
  process.exit(1);
});
