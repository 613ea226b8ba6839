// Start-up settings: readConfig takes every variable's default, reads good values, and
// refuses a bad value of each variable with a message naming it, the value and what is
// allowed; `npm start` (service/main.ts) with a bad value stops before listening, with
// that message, and `--help` lists every variable.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, readConfig, SETTINGS } from '../../service/config.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'odds-config-'));
  writeFileSync(join(dir, 'a-file'), 'not a directory');
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A value each variable must refuse (paths resolved in `before`). */
function badValues(): Record<string, string> {
  return {
    PORT: '70000',
    HOST: 'not a host!',
    BOARD: 'huge',
    SEED: '4x2',
    NOW: 'yesterday',
    SIM_RATE: '-5',
    DB_PATH: dir,
    REQUIRE_KEY: 'maybe',
    RATE_LIMIT_ENFORCE: '2',
    DATA_DIR: join(dir, 'a-file'),
    ARCHIVE_DIR: join(dir, 'a-file'),
    ARCHIVE_RETENTION_DAYS: '0',
    ARCHIVE_INTERVAL_MS: '50',
    INGEST_PORT: 'eighty',
    INGEST_HOST: 'a b',
    WAL_FSYNC: 'sometimes',
    INGEST_MAX_BATCH_BYTES: '16MiB',
    CHECKPOINT_INTERVAL_MS: '1.5',
    CHECKPOINT_LOG_BYTES: '0',
    TRANSPORT: 'carrier-pigeon',
    REUSE_PORT: 'shared',
    UWS_DIRECT: 'fast',
    STREAM_BUFFER_BYTES: '512',
    STREAM_RESUME_WAIT_MS: '60001',
    STREAM_MAX_SUBSCRIPTIONS: '0',
    STREAM_MAX_ANONYMOUS_CONNECTIONS: 'many',
    SNAPSHOT_MAX_AGE_MS: '99',
    SNAPSHOT_COMPRESSION_THREADS: '0',
    SINGLE_THREADED_GC: 'sometimes',
    ACCESS_LOG: 'verbose',
    LOG_LEVEL: 'loud',
    LOG_FORMAT: 'xml',
    LOG: 'kafka',
    ROLE: 'reader',
    NATS_URL: 'http://x',
    NATS_STREAM: 'a.b',
    NATS_BOARD: 'a b',
    NATS_MAX_AGE_MS: '1h',
    NATS_MAX_BYTES: '-5',
    REPLICA_MAX_LAG: 'lots',
    FEED: 'sportradar',
    ODDS_API_BASE_URL: 'ftp://odds.example',
    ODDS_API_SPORTS: 'NBA!',
    ODDS_API_REGIONS: 'u s',
    ODDS_API_MARKETS: ',',
    ODDS_API_INTERVAL: '0',
    ODDS_API_BUDGET_PER_DAY: '-1',
    ODDS_API_CREDITS_PER_HOUR: '1.5',
    ODDS_API_EVENT_INTERVAL: '0.01',
    ODDS_API_TIMEOUT: 'soon',
    SHUTDOWN_GRACE_MS: '1s',
    ALERTS: 'maybe',
    ALERTS_TICK_MS: '5',
    ALERTS_TIMEOUT_MS: '99',
    ALERTS_MAX_IN_FLIGHT: '0',
    ALERTS_RETRY_BASE_MS: '1s',
    ALERTS_RETRY_MAX_MS: '0',
    ALERTS_RETRY_FOR_MS: '-1',
    ALERTS_RETENTION_MS: '59999',
    ALERTS_THREAD_NICE: '20',
    MCP_MAX_ANSWER_BYTES: '4095',
    FAIR_LINE_BOOKS: 'Pinnacle!!',
    STEAM_THRESHOLD: '2',
    STEAM_WINDOW_MS: '999',
    TRUSTED_PROXIES: '127.0.0.1,nginx',
    REPLAY_WINDOW_HOURS: '1d',
  };
}

/** Free text: any value is allowed, so there is no bad one to test. */
const FREE_TEXT = new Set(['CURSOR_SECRET', 'INGEST_TOKEN', 'REPLICA_ID', 'ODDS_API_KEY', 'ALERTS_DB_PATH']);

function runMain(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', INGEST_PORT: '0', DATA_DIR: join(dir, 'data'), BOARD: 'small', DB_PATH: join(dir, 'odds.db'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('readConfig', () => {
  it('gives every default for an empty environment, and empty values count as unset', () => {
    const config = readConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.board, 'medium');
    assert.equal(config.seed, 42);
    assert.equal(config.now, null);
    assert.equal(config.simRate, 200);
    assert.equal(config.requireKey, false);
    assert.equal(config.walFsync, true);
    assert.equal(config.ingestPort, 8081);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.snapshotCompressionThreads, null, 'one thread per core, at most 8');
    assert.deepEqual(readConfig({ PORT: '', BOARD: ' ' }), config);
  });

  it('reads good values', () => {
    const config = readConfig({ PORT: '0', BOARD: 'Large', SEED: '7', NOW: '2026-11-21T12:00:00Z', REQUIRE_KEY: 'true', WAL_FSYNC: '0', INGEST_PORT: '0', CURSOR_SECRET: 's', LOG_LEVEL: 'warn', SNAPSHOT_COMPRESSION_THREADS: '3' });
    assert.equal(config.snapshotCompressionThreads, 3);
    assert.equal(config.port, 0);
    assert.equal(config.board, 'large');
    assert.equal(config.seed, 7);
    assert.equal(config.now, Date.parse('2026-11-21T12:00:00Z'));
    assert.equal(config.requireKey, true);
    assert.equal(config.walFsync, false);
    assert.equal(config.ingestPort, 0);
    assert.equal(config.cursorSecret, 's');
    assert.equal(config.logLevel, 'warn');
    assert.equal(readConfig({ SNAPSHOT_MAX_AGE_MS: '0' }).snapshotMaxAgeMs, 0, '0: no freshness bound');
    assert.equal(readConfig({ SNAPSHOT_MAX_AGE_MS: '100' }).snapshotMaxAgeMs, 100);
    assert.equal(readConfig({}).snapshotMaxAgeMs, 2000);
  });

  it('has a bad value for every variable that has one, and refuses each naming the variable, the value and what is allowed', () => {
    const bad = badValues();
    for (const s of SETTINGS) assert.ok(s.name in bad || FREE_TEXT.has(s.name), `no bad value tested for ${s.name}`);
    for (const [name, value] of Object.entries(bad)) {
      const allowed = SETTINGS.find((s) => s.name === name)!.allowed;
      assert.throws(
        () => readConfig({ [name]: value }),
        (error: unknown) => error instanceof ConfigError && error.problems.length === 1 && error.message.includes(name) && error.message.includes(JSON.stringify(value)) && error.message.includes(allowed),
        name,
      );
    }
  });

  it('names every bad variable at once and never echoes a secret', () => {
    assert.throws(
      () => readConfig({ BOARD: 'huge', NOW: 'yesterday' }),
      (error: unknown) => error instanceof ConfigError && error.problems.map((p) => p.name).join() === 'BOARD,NOW',
    );
  });
});

describe('npm start with bad settings', () => {
  it('stops before starting, naming every bad variable and its value in one message', async () => {
    // readConfig refuses each bad value alone (above); this proves the process wiring:
    // one start with every bad value at once exits 2 before listening and names each one,
    // so an operator fixes them all in one go. (One process instead of one per variable:
    // the per-variable runs took 76 s of the suite and proved nothing more.)
    const bad = badValues();
    const { code, output } = await runMain(bad);
    assert.equal(code, 2, output);
    for (const [name, value] of Object.entries(bad)) {
      assert.match(output, new RegExp(`${name}=${JSON.stringify(value).replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')} is not allowed`), `${name}: ${output}`);
    }
    assert.doesNotMatch(output, /ready in|\n\s+at /, 'no start and no stack trace');
  });

  it('--help lists every variable with its default', async () => {
    const { code, output } = await runMain({}, ['--help']);
    assert.equal(code, 0);
    for (const s of SETTINGS) {
      assert.match(output, new RegExp(`^  ${s.name} `, 'm'), s.name);
    }
    assert.match(output, /default 8080/);
    assert.match(output, /default medium; allowed: small, medium, large/);
  });
});
