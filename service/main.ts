// `npm start`: the medium fixture board with the live simulator on :8080, kept durable
// in DATA_DIR (default ./data: a restart restores it instead of generating it again)
// with the ingest listener on 127.0.0.1:8081 (service/durableStart.ts).
// PORT, HOST, BOARD (small|medium|large, or none for an empty board), SEED, NOW
// (freezes the clock: simulated time), SIM_RATE (updates/s, 0 = still board), DATA_DIR,
// INGEST_PORT, INGEST_HOST, INGEST_TOKEN, WAL_FSYNC and DB_PATH override the defaults;
// startApp reads the rest of its settings (REQUIRE_KEY, RATE_LIMIT_ENFORCE,
// CURSOR_SECRET) from the same process environment.
import { clockFromEnv } from '../engine/clock.ts';
import { boardOptionsFromEnv } from '../fixtures/boardFromEnv.ts';
import { startApp } from './app.ts';

function intFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a non-negative integer, got ${text}`);
  return Number(text);
}

async function main(): Promise<void> {
  const clock = clockFromEnv(process.env);
  const board = process.env.BOARD?.trim().toLowerCase() === 'none' ? 'none' : boardOptionsFromEnv(process.env, clock.now());
  const started = performance.now();
  const app = await startApp({
    clock,
    board,
    dataDir: process.env.DATA_DIR || './data',
    host: process.env.HOST ?? '0.0.0.0',
    port: intFromEnv('PORT', 8080),
    simulatorRate: intFromEnv('SIM_RATE', 200),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const rows = `${app.engine.liveRows.toLocaleString('en-US')} live rows`;
  const what = app.durable?.mode === 'restored' ? `restored board (${rows})` : board === 'none' ? `empty board (${rows})` : `${board.size} board (seed ${board.seed}, ${rows})`;
  process.stdout.write(
    `odds-engine: ${what} ` +
      `ready in ${seconds}s on http://${process.env.HOST ?? '0.0.0.0'}:${app.port}/api/v1/status; ` +
      `transport: ${app.server.transport}${app.durable === null ? '' : `; ${app.durable.describe()}`}\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping\n`);
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
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
