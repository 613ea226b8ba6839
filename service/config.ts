// Every setting the process reads from its environment, in one table: its name, its
// default, what it allows and how its text becomes a value. readConfig(env) reads them
// all at start-up and throws ConfigError naming every variable whose value is not
// allowed (the variable, the value as given, and what would be accepted), so a bad
// BOARD or NOW stops the start with one clear message instead of surfacing later deep
// in the code that uses it. `npm start -- --help` prints the same table (helpText).
//
// An empty value counts as unset (`PORT= npm start` takes the default). Secrets
// (CURSOR_SECRET, INGEST_TOKEN) are never echoed: an error names the variable only.
import { existsSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseInstant } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { DEFAULT_DB_PATH } from '../persistence/database.ts';
import { ODDS_API_SETTINGS, type FeedSetting } from '../feeds/feedSettings.ts';
import type { FeedConfig } from '../feeds/startFeed.ts';
import { parseTrustedProxies } from '../http/clientAddress.ts';
import type { SingleThreadedGcSetting } from './singleThreadedGc.ts';
import { parseSteamThreshold, parseWeightedBooks, type WeightedBook } from '../engine/signals/screenRecords.ts';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
/** auto: human-readable lines on a terminal, JSON lines otherwise (service/logger.ts). */
export type LogFormat = 'auto' | 'json' | 'pretty';
export type TransportName = 'auto' | 'uws' | 'node';

export interface Config extends FeedConfig {
  /** Public API listener. */
  port: number;
  host: string;
  board: BoardSize | 'none';
  seed: number;
  /** Epoch ms the clock is frozen at (simulated time), or null for the system clock. */
  now: number | null;
  /** Simulated updates per second; 0 leaves the board still. */
  simRate: number;
  dbPath: string;
  /** Undefined: the cursor codec's fixed default (cursors survive restarts). */
  cursorSecret: string | undefined;
  requireKey: boolean;
  rateLimitEnforce: boolean;
  /** Where the durable board (checkpoints and the batch log) lives; null: the board is generated and kept in memory only. */
  dataDir: string;
  ingestPort: number;
  ingestHost: string;
  /** Bearer token the ingest listener requires; null: none configured. */
  ingestToken: string | null;
  /** Largest batch body or WebSocket message the ingest listener takes. */
  ingestMaxBatchBytes: number;
  walFsync: boolean;
  checkpointIntervalMs: number;
  checkpointLogBytes: number;
  transport: TransportName;
  /** SO_REUSEPORT on the public port: several processes share it (off: a second process on a port in use fails to start). */
  reusePort: boolean;
  /** uWebSockets.js listens on the public port itself, without the front that sends what it cannot parse to node:http. */
  uwsDirect: boolean;
  streamBufferBytes: number;
  /** How long a resume from a clk ahead of this board (a replica behind the node that issued it) waits for the board to reach it. */
  streamResumeWaitMs: number;
  /** Open subscriptions per push-stream connection. */
  streamMaxSubscriptions: number;
  /** Push-stream WebSocket connections without an API key per client address. */
  streamMaxAnonymousConnections: number;
  /** Reverse proxies (addresses and CIDR blocks) whose X-Forwarded-For names the client (http/clientAddress.ts). */
  trustedProxies: string[];
  /** The snapshot's freshness bound: no answer misses a change older than this (ms); 0: no bound (only polled bodies refresh). */
  snapshotMaxAgeMs: number;
  /** Worker threads compressing snapshot pieces; null: one per core, at most 8. */
  snapshotCompressionThreads: number | null;
  /** Whether node runs with --single-threaded-gc (service/singleThreadedGc.ts): auto when the process may use one core only. */
  singleThreadedGc: SingleThreadedGcSetting;
  accessLog: boolean;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Milliseconds both ports keep serving after shutdown starts, /readyz answering 503. */
  shutdownGraceMs: number;
  /** Where the batch log lives: the local files in DATA_DIR, or a NATS JetStream stream. */
  log: 'file' | 'nats';
  /** writer: takes ingest and publishes to the log; replica: follows the stream, read only (needs LOG=nats). */
  role: 'writer' | 'replica';
  natsUrl: string;
  natsStream: string;
  /** The board's name in the stream's subjects. */
  natsBoard: string;
  natsMaxAgeMs: number | undefined;
  natsMaxBytes: number | undefined;
  /** This node's name in the fleet's usage buckets. */
  replicaId: string;
  /** A replica further behind the stream than this many records answers /readyz 503. */
  replicaMaxLag: number;
  // FEED and the ODDS_API_* settings of a feed run inside the process: FeedConfig, which
  // the feed owns (feeds/startFeed.ts); feeds/feedSettings.ts parses them the same way
  // for `npm run feed`.
  // webhooks (alerts/) and the MCP server (mcp/): documented here, read where they are used
  // (alerts/alertsConfig.ts, mcp/tools.ts) with the same ranges
  alerts: boolean;
  alertsDbPath: string | null;
  alertsTickMs: number;
  alertsTimeoutMs: number;
  alertsMaxInFlight: number;
  alertsRetryBaseMs: number;
  alertsRetryMaxMs: number;
  alertsRetryForMs: number;
  alertsRetentionMs: number;
  alertsThreadNice: number;
  mcpMaxAnswerBytes: number;
  /** The tick archive (docs/archive.md): its directory, or null (unset) for none. */
  archiveDir: string | null;
  archiveRetentionDays: number;
  archiveIntervalMs: number;
  /** How far back /odds/updated?since= and a stream resume reach through the tick archive. */
  replayWindowHours: number;
  // the trader screens (engine/signals/screenBook.ts, steamDetector.ts; docs/signals.md)
  /** The books the fair line is formed from, with their weights. */
  fairLineBooks: WeightedBook[];
  /** The smallest move that is steam, in implied percentage points or American cents. */
  steamThreshold: { unit: 'points' | 'cents'; threshold: number };
  /** The window a steam move happens within. */
  steamWindowMs: number;
}

interface Setting<K extends keyof Config> {
  key: K;
  name: string;
  /** The default as it would be written in the environment ('' for none). */
  fallback: string;
  /** What is allowed, in the words of an error message and of --help. */
  allowed: string;
  help: string;
  secret?: boolean;
  /** The value, or undefined when text is not allowed. text is trimmed and non-empty, or null when unset. */
  parse(text: string | null): Config[K] | undefined;
}

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

function intIn(min: number, max: number) {
  return (text: string | null, fallback: number): number | undefined => {
    if (text === null) return fallback;
    if (!/^\d+$/.test(text)) return undefined;
    const n = Number(text);
    return n >= min && n <= max ? n : undefined;
  };
}

const BOOLEAN_TEXT: Record<string, boolean> = { '1': true, true: true, yes: true, on: true, '0': false, false: false, no: false, off: false };

function flag(fallback: boolean) {
  return (text: string | null): boolean | undefined => (text === null ? fallback : BOOLEAN_TEXT[text.toLowerCase()]);
}

function oneOf<T extends string>(values: readonly T[], fallback: T) {
  return (text: string | null): T | undefined => {
    if (text === null) return fallback;
    const lower = text.toLowerCase();
    return values.includes(lower as T) ? (lower as T) : undefined;
  };
}

const port = intIn(0, 65535);

/** A feed setting (feeds/feedSettings.ts) as a row of this table: same variable, default, allowed texts and parser. */
function feedSetting<K extends keyof Config>(key: K, feed: FeedSetting<Config[K]>): Setting<K> {
  return { key, name: feed.env, fallback: feed.fallback, allowed: feed.allowed, help: `FEED=the-odds-api: ${feed.help}`, parse: (t) => feed.parse(t ?? feed.fallback) };
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
const FLAG_ALLOWED = '1, true, yes, on / 0, false, no, off';
const BOARD_SIZES = ['small', 'medium', 'large', 'none'] as const;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
const TRANSPORTS = ['auto', 'uws', 'node'] as const;
const GC_THREADS = ['auto', 'on', 'off'] as const;
const DEFAULT_CHECKPOINT_INTERVAL_MS = 60_000;
const DEFAULT_CHECKPOINT_LOG_BYTES = 256 * 1024 * 1024;
const LOG_KINDS = ['file', 'nats'] as const;
const ROLES = ['writer', 'replica'] as const;
const NAME_TOKEN = /^[A-Za-z0-9_-]+$/;
/** Unset stays undefined (the stream's default applies); a value must be a positive integer. */
const positiveOrUnset = (t: string | null): number | undefined => (t !== null && /^[1-9]\d*$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : undefined);

export const SETTINGS = [
  setting({ key: 'port', name: 'PORT', fallback: '8080', allowed: 'an integer from 0 to 65535 (0: any free port)', help: 'port of the public API', parse: (t) => port(t, 8080) }),
  setting({ key: 'host', name: 'HOST', fallback: '0.0.0.0', allowed: 'a host name or IP address', help: 'address the public API listens on', parse: (t) => (t === null ? '0.0.0.0' : /^[\w.:-]+$/.test(t) ? t : undefined) }),
  setting({ key: 'board', name: 'BOARD', fallback: 'medium', allowed: BOARD_SIZES.join(', '), help: 'size of the generated fixture board (none: an empty board that only the feeds fill); used only when DATA_DIR holds no board yet', parse: oneOf(BOARD_SIZES, 'medium') }),
  setting({ key: 'seed', name: 'SEED', fallback: '42', allowed: 'an integer', help: 'seed of the fixture board (and of the simulator)', parse: (t) => (t === null ? 42 : /^-?\d+$/.test(t) ? Number(t) >>> 0 : undefined) }),
  setting({
    key: 'now',
    name: 'NOW',
    fallback: '',
    allowed: 'an ISO-8601 instant (2026-11-21T12:00:00Z) or epoch milliseconds',
    help: 'freezes the clock at this instant (simulated time); unset: the system clock',
    parse: (t) => (t === null ? null : (parseInstant(t) ?? undefined)),
  }),
  setting({ key: 'simRate', name: 'SIM_RATE', fallback: '200', allowed: 'an integer from 0 to 1000000', help: 'simulated odds updates per second (0: a still board)', parse: (t) => intIn(0, 1_000_000)(t, 200) }),
  setting({ key: 'dbPath', name: 'DB_PATH', fallback: '$DATA_DIR/odds.db', allowed: 'a file path (not a directory) or :memory:', help: 'SQLite file of cold data, API keys and usage (kept beside the board in DATA_DIR unless set)', parse: (t) => (t === null ? DEFAULT_DB_PATH : isDirectory(t) ? undefined : t) }),
  setting({ key: 'cursorSecret', name: 'CURSOR_SECRET', fallback: '', allowed: 'any text', help: 'secret signing list cursors; unset: a fixed default', secret: true, parse: (t) => t ?? undefined }),
  setting({ key: 'requireKey', name: 'REQUIRE_KEY', fallback: '0', allowed: FLAG_ALLOWED, help: 'routes designated for a key refuse requests without one', parse: flag(false) }),
  setting({ key: 'rateLimitEnforce', name: 'RATE_LIMIT_ENFORCE', fallback: '0', allowed: FLAG_ALLOWED, help: 'answer 429 past a plan limit (otherwise only counted)', parse: flag(false) }),
  setting({ key: 'dataDir', name: 'DATA_DIR', fallback: './data', allowed: 'a directory path (created if missing; not a file)', help: 'durable board: checkpoints, the batch log, the ingest token and (unless DB_PATH) the SQLite file', parse: (t) => (t === null ? './data' : !existsSync(t) || isDirectory(t) ? t : undefined) }),
  setting({ key: 'ingestPort', name: 'INGEST_PORT', fallback: '8081', allowed: 'an integer from 0 to 65535 (0: any free port)', help: 'port of the ingest listener (write path), which also serves /metrics, /healthz and /readyz', parse: (t) => port(t, 8081) }),
  setting({ key: 'ingestHost', name: 'INGEST_HOST', fallback: '127.0.0.1', allowed: 'a host name or IP address', help: 'address the ingest listener listens on', parse: (t) => (t === null ? '127.0.0.1' : /^[\w.:-]+$/.test(t) ? t : undefined) }),
  setting({ key: 'ingestToken', name: 'INGEST_TOKEN', fallback: '', allowed: 'any text', help: 'bearer token the ingest listener requires', secret: true, parse: (t) => t }),
  setting({ key: 'ingestMaxBatchBytes', name: 'INGEST_MAX_BATCH_BYTES', fallback: String(16 * 1024 * 1024), allowed: 'an integer from 1 to 1073741824', help: 'largest batch body or WebSocket message the ingest listener takes (413 batch_too_large past it)', parse: (t) => intIn(1, 1 << 30)(t, 16 * 1024 * 1024) }),
  setting({ key: 'walFsync', name: 'WAL_FSYNC', fallback: '1', allowed: FLAG_ALLOWED, help: 'fsync the batch log before acknowledging a batch', parse: flag(true) }),
  setting({
    key: 'checkpointIntervalMs',
    name: 'CHECKPOINT_INTERVAL_MS',
    fallback: String(DEFAULT_CHECKPOINT_INTERVAL_MS),
    allowed: 'a non-negative integer (0: no timer)',
    help: 'checkpoint the durable board this often',
    parse: (t) => intIn(0, Number.MAX_SAFE_INTEGER)(t, DEFAULT_CHECKPOINT_INTERVAL_MS),
  }),
  setting({
    key: 'checkpointLogBytes',
    name: 'CHECKPOINT_LOG_BYTES',
    fallback: String(DEFAULT_CHECKPOINT_LOG_BYTES),
    allowed: 'a positive integer',
    help: 'checkpoint once the log since the last one is this large',
    parse: (t) => intIn(1, Number.MAX_SAFE_INTEGER)(t, DEFAULT_CHECKPOINT_LOG_BYTES),
  }),
  setting({ key: 'transport', name: 'TRANSPORT', fallback: 'auto', allowed: TRANSPORTS.join(', '), help: 'HTTP implementation of the public listener (auto: a native uWebSockets.js binary when one loads and the front can hand it whole connections, or UWS_DIRECT=1; else node:http, faster than relaying to uWS: docs/http.md)', parse: oneOf(TRANSPORTS, 'auto') }),
  setting({ key: 'reusePort', name: 'REUSE_PORT', fallback: '0', allowed: FLAG_ALLOWED, help: 'share PORT with other processes (SO_REUSEPORT; the kernel spreads connections between them); off: a second process on a port in use fails to start', parse: flag(false) }),
  setting({ key: 'uwsDirect', name: 'UWS_DIRECT', fallback: '0', allowed: FLAG_ALLOWED, help: 'uWebSockets.js listens on PORT itself, without the front that sends requests its parser cannot serve (HTTP/1.0, absolute-form targets, some header names, extension methods, pipelining behind a long answer) to node:http: fastest, for a service reached only through a proxy speaking plain HTTP/1.1 (docs/nginx.conf)', parse: flag(false) }),
  setting({ key: 'streamBufferBytes', name: 'STREAM_BUFFER_BYTES', fallback: String(8 * 1024 * 1024), allowed: 'an integer from 65536 to 1073741824', help: 'bytes a stream subscriber may leave unread before it is dropped as a slow consumer', parse: (t) => intIn(65_536, 1 << 30)(t, 8 * 1024 * 1024) }),
  setting({
    key: 'streamMaxSubscriptions',
    name: 'STREAM_MAX_SUBSCRIPTIONS',
    fallback: '100',
    allowed: 'an integer from 1 to 10000',
    help: 'open subscriptions one push-stream connection may hold; a subscribe past it is answered with status too_many_subscriptions',
    parse: (t) => intIn(1, 10_000)(t, 100),
  }),
  setting({
    key: 'streamMaxAnonymousConnections',
    name: 'STREAM_MAX_ANONYMOUS_CONNECTIONS',
    fallback: '32',
    allowed: 'an integer from 1 to 100000',
    help: 'push-stream connections without an API key one client address may hold at once, WebSocket and SSE counted together; the handshake or SSE request past it answers 429 too_many_connections',
    parse: (t) => intIn(1, 100_000)(t, 32),
  }),
  setting({
    key: 'trustedProxies',
    name: 'TRUSTED_PROXIES',
    fallback: '',
    allowed: "comma-separated IP addresses and CIDR blocks (e.g. 127.0.0.1,::1,10.0.0.0/8); '' for none",
    help: "reverse proxies whose X-Forwarded-For is believed: a request from one of them counts as the address it forwarded for (walking the header from the right past every trusted proxy) in the per-address limits; none by default, so every client is its TCP peer",
    parse: (t) => parseTrustedProxies(t ?? '') ?? undefined,
  }),
  setting({
    key: 'streamResumeWaitMs',
    name: 'STREAM_RESUME_WAIT_MS',
    fallback: '5000',
    allowed: 'an integer from 0 to 60000',
    help: "how long a stream resume whose clk is ahead of this node's board (issued by the writer or another replica further along the same stream) waits for the board to reach it before it is answered with a resync and an image",
    parse: (t) => intIn(0, 60_000)(t, 5000),
  }),
  setting({
    key: 'snapshotMaxAgeMs',
    name: 'SNAPSHOT_MAX_AGE_MS',
    fallback: '2000',
    allowed: '0 (no bound), or an integer from 100 to 600000',
    help: '/api/v1/snapshot freshness bound: the body without history, and the one with history while it is kept (5 minutes after its last request), is refreshed whenever the board moves, polled or not, and a poll whose newest version misses a change older than this (or whose syncToken /odds/updated would answer with the re-bootstrap note) waits for the next version. 0: no bound, for a process that serves /snapshot rarely or never: a body refreshes only while it is polled (within 30 s), and a poll gets its newest version whatever its age',
    parse: (t) => (t === '0' ? 0 : intIn(100, 600_000)(t, 2000)),
  }),
  setting({
    key: 'snapshotCompressionThreads',
    name: 'SNAPSHOT_COMPRESSION_THREADS',
    fallback: '(one per core, at most 8)',
    allowed: 'an integer from 1 to 64',
    help: 'worker threads compressing the /api/v1/snapshot body as it changes (below the event loop\'s OS priority); more cores publish versions sooner under heavy ticks',
    parse: (t) => (t === null ? null : intIn(1, 64)(t, 0)),
  }),
  setting({
    key: 'singleThreadedGc',
    name: 'SINGLE_THREADED_GC',
    fallback: 'auto',
    allowed: GC_THREADS.join(', '),
    help: "run node with --single-threaded-gc (the process relaunches itself with it, Node 22.15 and later): auto does so when the process may use one core only, where V8's collector threads would take the event loop's core",
    parse: oneOf(GC_THREADS, 'auto'),
  }),
  setting({ key: 'accessLog', name: 'ACCESS_LOG', fallback: '0', allowed: FLAG_ALLOWED, help: 'one JSON log line per request (costs throughput)', parse: flag(false) }),
  setting({ key: 'logLevel', name: 'LOG_LEVEL', fallback: 'info', allowed: LOG_LEVELS.join(', '), help: 'lowest level of the log lines written to stdout', parse: oneOf(LOG_LEVELS, 'info') }),
  setting({ key: 'logFormat', name: 'LOG_FORMAT', fallback: 'auto', allowed: LOG_FORMATS.join(', '), help: 'log lines on stdout: auto writes readable lines when stdout is a terminal and JSON lines otherwise (a file, a pipe, a log collector); json or pretty forces one', parse: oneOf(LOG_FORMATS, 'auto') }),
  setting({
    key: 'shutdownGraceMs',
    name: 'SHUTDOWN_GRACE_MS',
    fallback: '0',
    allowed: 'an integer from 0 to 600000',
    help: 'on SIGTERM/SIGINT, keep serving this long with /readyz answering 503 (so load balancers stop routing here) before closing',
    parse: (t) => intIn(0, 600_000)(t, 0),
  }),
  // read replicas: the log on a NATS JetStream stream (service/replicatedStart.ts, docs/replicas.md)
  setting({ key: 'log', name: 'LOG', fallback: 'file', allowed: LOG_KINDS.join(', '), help: 'where the batch log lives: local files in DATA_DIR, or a NATS JetStream stream (replicas follow it)', parse: oneOf(LOG_KINDS, 'file') }),
  setting({ key: 'role', name: 'ROLE', fallback: 'writer', allowed: `${ROLES.join(', ')} (replica needs LOG=nats)`, help: 'writer takes ingest; replica follows the stream and serves reads only', parse: oneOf(ROLES, 'writer') }),
  setting({ key: 'natsUrl', name: 'NATS_URL', fallback: 'nats://127.0.0.1:4222', allowed: 'a nats://, tls://, ws:// or wss:// address', help: 'the NATS server (LOG=nats)', parse: (t) => (t === null ? 'nats://127.0.0.1:4222' : /^(nats|tls|wss?):\/\/\S+$/.test(t) ? t : undefined) }),
  setting({ key: 'natsStream', name: 'NATS_STREAM', fallback: 'ODDS', allowed: "letters, digits, '-', '_'", help: 'the JetStream stream of the log (its object store and usage buckets are named after it)', parse: (t) => (t === null ? 'ODDS' : NAME_TOKEN.test(t) ? t : undefined) }),
  setting({ key: 'natsBoard', name: 'NATS_BOARD', fallback: 'main', allowed: "letters, digits, '-', '_'", help: "the board's name in the stream's subjects", parse: (t) => (t === null ? 'main' : NAME_TOKEN.test(t) ? t : undefined) }),
  setting({ key: 'natsMaxAgeMs', name: 'NATS_MAX_AGE_MS', fallback: String(7 * 24 * 3600_000), allowed: 'a positive integer', help: 'the stream drops records older than this', parse: positiveOrUnset }),
  setting({ key: 'natsMaxBytes', name: 'NATS_MAX_BYTES', fallback: String(8 * 1024 ** 3), allowed: 'a positive integer', help: 'the stream keeps at most this many bytes, dropping the oldest', parse: positiveOrUnset }),
  setting({ key: 'replicaId', name: 'REPLICA_ID', fallback: '(the host name)', allowed: "letters, digits, '-', '_' (others become '_')", help: "this node's name in the fleet's API key usage counts; unique per node", parse: (t) => (t ?? hostname()).replace(/[^A-Za-z0-9_-]/g, '_') }),
  setting({ key: 'replicaMaxLag', name: 'REPLICA_MAX_LAG', fallback: '1000', allowed: 'a non-negative integer', help: 'a replica more records than this behind the stream answers /readyz 503 (catching up)', parse: (t) => intIn(0, Number.MAX_SAFE_INTEGER)(t, 1000) }),
  setting({
    key: 'feed',
    name: 'FEED',
    fallback: '',
    allowed: 'the-odds-api',
    help: 'a feed polled inside the process, submitting in process through the write path (needs ODDS_API_KEY)',
    parse: (t) => (t === null ? null : t === 'the-odds-api' ? t : undefined),
  }),
  setting({ key: 'oddsApiKey', name: 'ODDS_API_KEY', fallback: '', allowed: ODDS_API_SETTINGS.apiKey.allowed, help: `FEED=the-odds-api: ${ODDS_API_SETTINGS.apiKey.help}`, secret: true, parse: (t) => t }),
  feedSetting('oddsApiBaseUrl', ODDS_API_SETTINGS.baseUrl),
  feedSetting('oddsApiSports', ODDS_API_SETTINGS.sports),
  feedSetting('oddsApiRegions', ODDS_API_SETTINGS.regions),
  feedSetting('oddsApiMarkets', ODDS_API_SETTINGS.markets),
  feedSetting('oddsApiIntervalMs', ODDS_API_SETTINGS.intervalMs),
  feedSetting('oddsApiBudgetPerDay', ODDS_API_SETTINGS.budgetPerDay),
  feedSetting('oddsApiCreditsPerHour', ODDS_API_SETTINGS.creditsPerHour),
  feedSetting('oddsApiEventIntervalMs', ODDS_API_SETTINGS.eventIntervalMs),
  feedSetting('oddsApiTimeoutMs', ODDS_API_SETTINGS.timeoutMs),
  // webhooks (docs/alerts.md); alerts/alertsConfig.ts reads them at start with these ranges
  setting({ key: 'alerts', name: 'ALERTS', fallback: '1', allowed: '0 or 1', help: 'signed webhooks (needs DATA_DIR; with LOG=nats on the writer only): 1 runs the alert producer, the outbox and the admin API on the ingest listener; 0 turns them off (the admin API answers 503)', parse: (t) => (t === null ? true : t === '1' ? true : t === '0' ? false : undefined) }),
  setting({ key: 'alertsDbPath', name: 'ALERTS_DB_PATH', fallback: '$DATA_DIR/alerts.db', allowed: 'a file path', help: 'SQLite file (WAL, an fdatasync after each commit) of the webhook subscriptions and the alert outbox, owned by the delivery thread', parse: (t) => t }),
  setting({ key: 'alertsTickMs', name: 'ALERTS_TICK_MS', fallback: '200', allowed: 'an integer from 10 to 60000', help: 'how often the alert producer looks at the board: moves of one row within a tick are one line.moved, an arbitrage opened and closed within a tick is not seen', parse: (t) => intIn(10, 60_000)(t, 200) }),
  setting({ key: 'alertsTimeoutMs', name: 'ALERTS_TIMEOUT_MS', fallback: '10000', allowed: 'an integer from 100 to 120000', help: 'deadline of one webhook request; a receiver answering no 2xx within it has failed that attempt', parse: (t) => intIn(100, 120_000)(t, 10_000) }),
  setting({ key: 'alertsMaxInFlight', name: 'ALERTS_MAX_IN_FLIGHT', fallback: '512', allowed: 'an integer from 1 to 100000', help: 'webhook requests in flight over all endpoints (one per endpoint at most)', parse: (t) => intIn(1, 100_000)(t, 512) }),
  setting({ key: 'alertsRetryBaseMs', name: 'ALERTS_RETRY_BASE_MS', fallback: '1000', allowed: 'an integer from 1 to 86400000', help: 'first wait before a failed webhook batch is sent again; it doubles per attempt, scaled by a random factor in [0.5, 1)', parse: (t) => intIn(1, 86400000)(t, 1000) }),
  setting({ key: 'alertsRetryMaxMs', name: 'ALERTS_RETRY_MAX_MS', fallback: '3600000', allowed: 'an integer from 1 to 86400000', help: 'longest wait between two attempts of a webhook batch', parse: (t) => intIn(1, 86400000)(t, 3_600_000) }),
  setting({ key: 'alertsRetryForMs', name: 'ALERTS_RETRY_FOR_MS', fallback: '86400000', allowed: 'an integer from 0 to 2592000000', help: "how long after a batch's first failure it is retried before it goes to the subscription's dead letters", parse: (t) => intIn(0, 2592000000)(t, 86400000) }),
  setting({ key: 'alertsRetentionMs', name: 'ALERTS_RETENTION_MS', fallback: '604800000', allowed: 'an integer from 60000 to 31536000000', help: 'how long delivered alert events are kept in the outbox for replays', parse: (t) => intIn(60_000, 31536000000)(t, 604800000) }),
  setting({ key: 'alertsThreadNice', name: 'ALERTS_THREAD_NICE', fallback: '0', allowed: 'an integer from 0 to 19', help: "nice levels the webhook delivery thread runs below the process (Linux: a thread's own priority): where the CPU is short, ingest acknowledgements and reads get a core before the fan-out, which then falls behind instead; 0 runs it at the process's priority", parse: (t) => intIn(0, 19)(t, 0) }),
  // the MCP server (docs/mcp.md); mcp/tools.ts reads it with this range (also for npm run mcp)
  setting({ key: 'mcpMaxAnswerBytes', name: 'MCP_MAX_ANSWER_BYTES', fallback: '65536', allowed: 'an integer from 4096 to 16777216', help: 'largest answer of one MCP tool call (POST /mcp and npm run mcp): a page that would be bigger comes back with fewer rows and meta.note saying so', parse: (t) => intIn(4096, 16 * 1024 * 1024)(t, 65_536) }),
  // the tick archive (docs/archive.md); service/durableStart.ts opens it with these
  setting({ key: 'archiveDir', name: 'ARCHIVE_DIR', fallback: '', allowed: 'a directory path (created if missing; not a file)', help: 'the tick archive: every accepted change, moved from the batch log into Parquet files here, a directory per UTC day, a finished day split by event into part files (docs/archive.md) (needs DATA_DIR and LOG=file); unset: no archive, and the log is deleted at checkpoints as before', parse: (t) => (t === null ? null : !existsSync(t) || isDirectory(t) ? t : undefined) }),
  setting({ key: 'archiveRetentionDays', name: 'ARCHIVE_RETENTION_DAYS', fallback: '30', allowed: 'an integer from 1 to 36500', help: 'days of the tick archive kept, today included; older day directories are deleted', parse: (t) => intIn(1, 36_500)(t, 30) }),
  setting({ key: 'archiveIntervalMs', name: 'ARCHIVE_INTERVAL_MS', fallback: '10000', allowed: 'an integer from 100 to 3600000', help: 'how often acknowledged changes are written to the tick archive (the batch log keeps them until then); history routes also read the changes not written yet', parse: (t) => intIn(100, 3_600_000)(t, 10_000) }),
  setting({ key: 'replayWindowHours', name: 'REPLAY_WINDOW_HOURS', fallback: '24', allowed: 'an integer from 0 to 8760', help: "with ARCHIVE_DIR, how far back /odds/updated?since= and a stream resume (an old clk) are answered exactly, from the archive past the board's 10 minutes of tombstones; older, or 0: the re-bootstrap note and the stream's resync, as without an archive", parse: (t) => intIn(0, 8760)(t, 24) }),
  // the trader screens: kept together
  setting({
    key: 'fairLineBooks',
    name: 'FAIR_LINE_BOOKS',
    fallback: 'pinnacle,circa,bookmaker',
    allowed: 'comma-separated sportsbook ids (lower case), each optionally :weight (a positive number; default 1), at most 16, no repeats',
    help: 'the sharp books the fair line of /fair-lines and /ev is formed from, and their weights in the mean of their no-vig probabilities (e.g. pinnacle:2,circa,bookmaker); their ticks are watched for steam',
    parse: (t) => parseWeightedBooks(t ?? 'pinnacle,circa,bookmaker') ?? undefined,
  }),
  setting({
    key: 'steamThreshold',
    name: 'STEAM_THRESHOLD',
    fallback: '2pp',
    allowed: 'a positive number followed by pp (implied percentage points) or c (American cents), e.g. 2pp or 15c',
    help: 'the smallest shortening of a fair-line book\'s price within STEAM_WINDOW_MS that is reported as a steam move (/steam and the steam stream topic)',
    parse: (t) => parseSteamThreshold(t ?? '2pp') ?? undefined,
  }),
  setting({ key: 'steamWindowMs', name: 'STEAM_WINDOW_MS', fallback: '60000', allowed: 'an integer from 1000 to 3600000', help: 'the window of a steam move: the move is measured from the price in force this long before the tick', parse: (t) => intIn(1000, 3_600_000)(t, 60_000) }),
] as const;

export interface ConfigProblem {
  name: string;
  /** The value as given, or null for a secret. */
  value: string | null;
  allowed: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map((p) => `${p.name}=${p.value === null ? '(hidden)' : JSON.stringify(p.value)} is not allowed: expected ${p.allowed}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** Reads and checks every setting; throws ConfigError listing each one whose value is not allowed. */
export function readConfig(env: NodeJS.ProcessEnv): Config {
  const config: Partial<Record<keyof Config, unknown>> = {};
  const problems: ConfigProblem[] = [];
  for (const s of SETTINGS as readonly Setting<keyof Config>[]) {
    const raw = env[s.name];
    const text = raw === undefined || raw.trim() === '' ? null : raw.trim();
    const value = s.parse(text);
    if (value === undefined && text !== null) problems.push({ name: s.name, value: s.secret === true ? null : raw!, allowed: s.allowed });
    else config[s.key] = value;
  }
  // a replica follows the writer through the stream: there is none with the local log
  if (problems.length === 0 && config.role === 'replica' && config.log !== 'nats') problems.push({ name: 'ROLE', value: env.ROLE!, allowed: 'writer with LOG=file (replica needs LOG=nats)' });
  if (config.feed === 'the-odds-api' && config.oddsApiKey === null) problems.push({ name: 'ODDS_API_KEY', value: '', allowed: 'an API key of The Odds API: FEED=the-odds-api needs one' });
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Config;
}

/** What `npm start -- --help` prints: every variable with its default and what it allows. */
export function helpText(): string {
  const lines = ['odds-engine: the in-memory odds service (npm start). Settings come from the environment:', ''];
  const width = Math.max(...SETTINGS.map((s) => s.name.length));
  for (const s of SETTINGS) {
    const fallback = s.fallback === '' ? '(unset)' : s.fallback;
    lines.push(`  ${s.name.padEnd(width)}  ${s.help}`);
    lines.push(`  ${''.padEnd(width)}  default ${fallback}; allowed: ${s.allowed}`);
  }
  lines.push('', 'Example: BOARD=small NOW=2026-11-21T12:00:00Z SIM_RATE=0 npm start');
  return `${lines.join('\n')}\n`;
}
