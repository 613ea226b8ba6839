// Start time and resident memory of the service as operators run it: `service/main.ts`
// in a process of its own (DATA_DIR in a temp dir, the simulator off), timed from the
// spawn, on the large board (BOARD overrides; START_LOGGED_UPDATES sets how many updates
// are logged after the first checkpoint, default 1,000,000):
// - first start (generate, load, cold data, first checkpoint, listen): until the ready
//   line, and until the first full /snapshot and the first signal page are answered;
// - N updates sent to the ingest listener (1,000-tick msgpack batches, 4 in flight, from
//   a child process: bench/ingestClient.ts), then a SIGKILL, so nothing more is
//   checkpointed: the restart restores the checkpoint and replays the N logged updates;
// - restart: until the ready line (with its phases), and until /snapshot (its count
//   checked against the board's live rows), /arbitrage and /edges are answered;
// - with each start, the CPU seconds the service had used (all threads) at the ready line
//   and once the routes answered: on a machine other work shares, the figure it stretches least;
// - resident memory (VmRSS) per live row, all in: with the plain snapshot polled every
//   100 ms and the history variant idle, then with the history variant polled every second
//   as well (START_MEMORY_SECONDS each, default 20; the median of one VmRSS sample a
//   second over the second half of each window).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { runClient } from './ingest.bench.ts';

type Measurements = Record<string, number | string>;

const MAIN = fileURLToPath(new URL('../service/main.ts', import.meta.url));
const TOKEN = 'start-bench-token';
const BATCH = 1000;

interface ReadyLine {
  /** CPU seconds the process had used (all its threads, user + system) when the ready line came (/proc/PID/stat). */
  cpuSeconds?: number;
  port: number;
  ingestPort: number;
  liveRows: number;
  seconds: number;
  /** Absent from a ready line of code before the start phases were reported. */
  phases?: Record<string, number>;
}

interface Service {
  child: ChildProcess;
  spawned: number;
  ready: Promise<ReadyLine & { atMs: number }>;
  /** The end of its stderr (what it said before failing). */
  errors(): string;
}

function startService(dataDir: string, env: NodeJS.ProcessEnv): Service {
  const spawned = performance.now();
  // START_NODE_ARGS: extra node flags for the service (e.g. --cpu-prof --cpu-prof-dir=DIR, not allowed in NODE_OPTIONS)
  const nodeArgs = (process.env.START_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', MAIN], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', INGEST_PORT: '0', HOST: '127.0.0.1', SIM_RATE: '0', LOG_FORMAT: 'json', INGEST_TOKEN: TOKEN, ALERTS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  const ready = new Promise<ReadyLine & { atMs: number }>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        if (!line.includes('"event":"ready"')) continue;
        resolve({ ...(JSON.parse(line) as ReadyLine), atMs: performance.now() - spawned, cpuSeconds: cpuSecondsOf(child.pid!) });
      }
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}) before it was ready: ${errors}`)));
  });
  return { child, spawned, ready, errors: () => `exit ${child.exitCode ?? child.signalCode ?? 'not yet'}; ${errors}` };
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** One GET on a connection of its own: status, headers and the whole body (gzip left as sent). */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; etag: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent: false, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, etag: String(response.headers.etag ?? ''), body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/** ms from the spawn until `path` is answered 200 (and, for /snapshot, the body's count is `rows`). */
async function answeredAt(service: Service, port: number, path: string, rows?: number): Promise<number> {
  let answer: { status: number; body: Buffer };
  try {
    answer = await get(port, path);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}; the service: ${service.errors()}`);
  }
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
  if (rows !== undefined) {
    const body = answer.body;
    // the count from the body's head ({"updated":…,"syncToken":…,"count":N,…): the large
    // board's body is longer than a string may be, so it is not parsed whole
    const raw = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body) : body;
    const head = /^\{"updated":"[^"]*","syncToken":"\d+","count":(\d+),"events":\[/.exec(raw.subarray(0, 256).toString('latin1'));
    if (head === null || raw.subarray(raw.length - 2).toString('latin1') !== ']}') throw new Error(`${path}: not a snapshot body: ${raw.subarray(0, 120).toString()}`);
    const count = Number(head[1]);
    if (count !== rows) throw new Error(`${path}: count ${count}, the board has ${rows} live rows`);
  }
  return performance.now() - service.spawned;
}

/**
 * CPU seconds a process has used so far, all threads, user + system (/proc/PID/stat
 * utime and stime, in clock ticks of 1/100 s): on a machine other work shares, the
 * measure of a start's work that the others do not stretch.
 */
function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Resident bytes of a process (VmRSS). */
function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? NaN : Number(match[1]) * 1024;
}

/** The median of the process's resident bytes sampled every second over the second half of the time until `until`. */
async function sampleResident(pid: number, until: number): Promise<number> {
  const samples: number[] = [];
  const from = performance.now() + (until - performance.now()) / 2;
  while (performance.now() < until) {
    if (performance.now() >= from) samples.push(residentBytes(pid));
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (samples.length === 0) samples.push(residentBytes(pid));
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1]!;
}

/** Polls /snapshot every `everyMs` until `until` (timer ms), reading each body to its end. */
async function poll(port: number, withHistory: boolean, everyMs: number, until: number): Promise<void> {
  let etag = '';
  while (performance.now() < until) {
    const started = performance.now();
    const answer = await get(port, `/api/v1/snapshot${withHistory ? '?include_history=true' : ''}`, etag === '' ? {} : { 'if-none-match': etag });
    if (answer.status === 200) etag = answer.etag;
    const wait = everyMs - (performance.now() - started);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** Ids of live rows priced in American odds, from the API (what the logged ticks move). */
async function tickIds(port: number, count: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor = '';
  while (ids.length < count) {
    const answer = await get(port, `/api/v1/odds?limit=1000${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    const page = JSON.parse(answer.body.toString()) as { data: { id: string; priceAmerican?: number | null }[]; meta: { nextCursor?: string | null } };
    for (const row of page.data) if (typeof row.priceAmerican === 'number') ids.push(row.id);
    if (!page.meta.nextCursor) break;
    cursor = page.meta.nextCursor;
  }
  if (ids.length === 0) throw new Error('no priced rows on the board');
  return ids;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;
const phasesText = (phases: Record<string, number> | undefined) => (phases === undefined ? '(not reported)' : Object.entries(phases).map(([phase, ms]) => `${phase} ${ms}`).join(', '));

export async function benchStart(): Promise<Measurements> {
  const size = process.env.BOARD ?? 'large';
  const logged = Number(process.env.START_LOGGED_UPDATES ?? 1_000_000);
  const memorySeconds = Number(process.env.START_MEMORY_SECONDS ?? 20);
  const dir = mkdtempSync(join(tmpdir(), 'start-bench-'));
  const dataDir = join(dir, 'data');
  // no checkpoint but the first one and the last (SIGTERM): the restart replays what was logged
  const env = { BOARD: size, SEED: '42', NOW: '2026-11-21T12:00:00Z', CHECKPOINT_INTERVAL_MS: '0', CHECKPOINT_LOG_BYTES: String(2 ** 40) };
  const out: Measurements = { board: `${size}, seed 42`, 'updates logged before the restart': logged };
  let service: Service | null = null;
  try {
    service = startService(dataDir, env);
    let ready = await service.ready;
    out['live rows'] = ready.liveRows;
    out['first start: until the ready line (s)'] = seconds(ready.atMs);
    out['first start: CPU until the ready line (s, all threads)'] = ready.cpuSeconds ?? NaN;
    out['first start: phases (ms)'] = phasesText(ready.phases);
    out['first start: until /snapshot is answered in full (s)'] = seconds(await answeredAt(service, ready.port, '/api/v1/snapshot', ready.liveRows));
    out['first start: until /arbitrage is answered (s)'] = seconds(await answeredAt(service, ready.port, '/api/v1/arbitrage?limit=10'));
    out['first start: CPU until then (s, all threads)'] = cpuSecondsOf(service.child.pid!);

    const ids = await tickIds(ready.port, 20_000);
    const sent = await runClient({ kind: 'http', port: ready.ingestPort, token: TOKEN, ids, batchSize: BATCH, inFlight: 4, batches: Math.ceil(logged / BATCH) });
    if (sent.errors.length > 0) throw new Error(`logging updates: ${sent.errors.join('; ')}`);
    out['logging: acknowledged updates/s'] = Math.round(sent.updates / (sent.ms / 1000));
    // a crash: no last checkpoint, so the restart replays every logged update
    await stop(service.child, 'SIGKILL');

    service = startService(dataDir, env);
    ready = await service.ready;
    out['restart: until the ready line (s)'] = seconds(ready.atMs);
    out['restart: CPU until the ready line (s, all threads)'] = ready.cpuSeconds ?? NaN;
    out['restart: phases (ms)'] = phasesText(ready.phases);
    // every route the moment it is ready: the first requests, each timed from the spawn
    out['restart: until /snapshot is answered in full (s)'] = seconds(await answeredAt(service, ready.port, '/api/v1/snapshot', ready.liveRows));
    out['restart: until /arbitrage is answered (s)'] = seconds(await answeredAt(service, ready.port, '/api/v1/arbitrage?limit=10'));
    out['restart: until /edges is answered (s)'] = seconds(await answeredAt(service, ready.port, '/api/v1/edges?limit=10'));
    out['restart: CPU until then (s, all threads)'] = cpuSecondsOf(service.child.pid!);

    // resident memory moves with the collector's rounds: the median of one sample a second
    // over the second half of each window
    const pid = service.child.pid!;
    let until = performance.now() + memorySeconds * 1000;
    let resident = await Promise.all([sampleResident(pid, until), poll(ready.port, false, 100, until)]).then(([median]) => median);
    out['resident bytes per live row, plain snapshot polled every 100 ms, history idle'] = Math.round(resident / ready.liveRows);
    out['resident MB, plain polled, history idle'] = Math.round(resident / 1e6);
    until = performance.now() + memorySeconds * 1000;
    resident = await Promise.all([sampleResident(pid, until), poll(ready.port, false, 100, until), poll(ready.port, true, 1000, until)]).then(([median]) => median);
    out['resident bytes per live row, plain polled every 100 ms, history every 1 s'] = Math.round(resident / ready.liveRows);
    out['resident MB, plain and history polled'] = Math.round(resident / 1e6);
    await stop(service.child, 'SIGTERM');
  } finally {
    if (service !== null) await stop(service.child, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
