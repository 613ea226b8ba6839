// Reference points for HTTP throughput on this machine: a bare uWebSockets.js hello
// world and uWS writing one prebuilt Buffer, measured with wrk. The facade's own
// benchmarks compare against these. wrk runs pinned to core 1 and the server process
// to core 0, so client and server do not fight over a core.
import { execFileSync, spawn } from 'node:child_process';
import type { TemplatedApp, us_listen_socket } from 'uws-btc-vision';
import { loadUws, type Uws } from '../http/transport/loadUws.ts';
import { createServer } from '../http/server.ts';
import { defineRoute } from '../http/router.ts';

export interface BenchServer {
  port: number;
  close(): void;
}

/** The native uWS binary the transport would load (the baselines need one). */
function nativeUws(): Uws {
  const loaded = loadUws();
  if (!loaded.ok) throw new Error(`the uWS baselines need a native uWebSockets.js binary: ${loaded.summary}`);
  return loaded.uws;
}

function listen(app: TemplatedApp): Promise<BenchServer> {
  const uWS = nativeUws();
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket: us_listen_socket | false) => {
      if (socket === false) return reject(new Error('listen failed'));
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: () => {
          uWS.us_listen_socket_close(socket);
          app.close();
        },
      });
    });
  });
}

/** (a) The floor: uWS answering a constant string. */
export function startHelloWorld(): Promise<BenchServer> {
  const app = nativeUws().App();
  app.get('/*', (res) => {
    res.end('Hello World!');
  });
  return listen(app);
}

/** (b) uWS writing a given prebuilt Buffer with the headers a JSON answer carries. */
export function startBufferServer(body: Buffer, contentType = 'application/json; charset=utf-8'): Promise<BenchServer> {
  const app = nativeUws().App();
  app.get('/*', (res) => {
    res.cork(() => {
      res.writeHeader('Content-Type', contentType).writeHeader('ETag', '"baseline"').writeHeader('Access-Control-Allow-Origin', '*').end(body);
    });
  });
  return listen(app);
}

/**
 * (c) The facade itself on a cached route whose rows are the given prebuilt bytes
 * (JSON objects joined by ','): router, auth hook, raw-key cache hit, validity check,
 * ETag/304 and CORS headers, without any engine work. Compare with (b).
 */
export async function startFacadeServer(rows: Buffer, count: number): Promise<BenchServer> {
  const route = defineRoute({
    path: '/api/v1/odds',
    auth: 'key',
    response: 'OddsRow',
    query: [{ name: 'league', kind: 'list', case: 'lower' }],
    cache: { validity: () => 1 },
    handle: () => ({ kind: 'rows', rows, count, updated: Date.UTC(2026, 10, 21, 12) }),
  });
  const server = await createServer({ routes: [route], host: '127.0.0.1', port: 0, openapi: false });
  return { port: server.port, close: () => void server.close() };
}

export interface WrkOptions {
  connections?: number;
  seconds?: number;
  threads?: number;
  headers?: Record<string, string>;
  /** Core for wrk (default 1). */
  clientCore?: number;
  /** Core the calling (server) process is pinned to first (default 0); null leaves it alone. */
  serverCore?: number | null;
}

export interface WrkResult {
  requestsPerSec: number;
  mbPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs `wrk --latency` (no Lua) against url and parses its summary. */
export async function runWrk(url: string, options: WrkOptions = {}): Promise<WrkResult> {
  const { connections = 64, seconds = 5, threads = 1, headers = {}, clientCore = 1, serverCore = 0 } = options;
  const pin = hasTaskset();
  if (pin && serverCore !== null) execFileSync('taskset', ['-pc', String(serverCore), String(process.pid)], { stdio: 'ignore' });
  const args = ['--latency', `-t${threads}`, `-c${connections}`, `-d${seconds}s`];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  const command = pin ? 'taskset' : 'wrk';
  const argv = pin ? ['-c', String(clientCore), 'wrk', ...args] : args;
  // Asynchronous on purpose: the server under test lives in this process's event loop.
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (data: Buffer) => (text += data.toString()));
    child.stderr.on('data', (data: Buffer) => (text += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
  });
  return parseWrk(output);
}

const TIME_UNIT: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60000 };
const SIZE_UNIT: Readonly<Record<string, number>> = { B: 1 / 1048576, KB: 1 / 1024, MB: 1, GB: 1024 };

export function parseWrk(output: string): WrkResult {
  const number = (pattern: RegExp): RegExpExecArray => {
    const match = pattern.exec(output);
    if (match === null) throw new Error(`cannot parse wrk output (${pattern}):\n${output}`);
    return match;
  };
  const latency = (percent: string): number => {
    const match = number(new RegExp(`^\\s*${percent}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm'));
    return Number(match[1]) * TIME_UNIT[match[2]!]!;
  };
  const transfer = number(/Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/);
  const errors = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requestsPerSec: Number(number(/Requests\/sec:\s+([\d.]+)/)[1]),
    mbPerSec: Number(transfer[1]) * SIZE_UNIT[transfer[2]!]!,
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    requests: Number(number(/(\d+) requests in/)[1]),
    errors: (errors === null ? 0 : Number(errors[1])) + (socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0)),
  };
}

/** Both baselines, briefly; usable as a bench section. */
export async function benchHttpBaseline(seconds = 5): Promise<Record<string, number | string>> {
  const results: Record<string, number | string> = {};
  const hello = await startHelloWorld();
  try {
    const r = await runWrk(`http://127.0.0.1:${hello.port}/`, { seconds });
    Object.assign(results, { 'uws hello world req/s': r.requestsPerSec, 'uws hello world p50 ms': r.p50Ms, 'uws hello world p99 ms': r.p99Ms });
  } finally {
    hello.close();
  }
  const body = Buffer.alloc(40 * 1024, 'x');
  const buffer = await startBufferServer(body);
  try {
    const r = await runWrk(`http://127.0.0.1:${buffer.port}/`, { seconds });
    Object.assign(results, { 'uws 40 KB buffer req/s': r.requestsPerSec, 'uws 40 KB buffer MB/s': r.mbPerSec, 'uws 40 KB buffer p50 ms': r.p50Ms, 'uws 40 KB buffer p99 ms': r.p99Ms });
  } finally {
    buffer.close();
  }
  const row = '{"id":"ev1:pinnacle:TOTAL:FULL_OVER_45.5","sportsbook":"pinnacle","league":"nfl","eventId":"ev1","market":"TOTAL","marketSubtype":"TOTAL","period":"FULL","selection":"Over 45.5","side":"OVER","teamSide":"NONE","teamName":"Over","priceAmerican":-110,"priceDecimal":1.9091,"line":45.5,"suspended":false,"eventStartTime":"2026-11-21T18:00","updated":"2026-11-21T12:00:00.000Z"}';
  const rows = Buffer.from(Array.from({ length: 100 }, () => row).join(','));
  const facade = await startFacadeServer(rows, 100);
  try {
    const url = `http://127.0.0.1:${facade.port}/api/v1/odds?league=nfl`;
    const full = await runWrk(url, { seconds });
    Object.assign(results, { 'facade cached 100-row page req/s': full.requestsPerSec, 'facade cached 100-row page p99 ms': full.p99Ms });
    const etag = await fetch(url).then((response) => response.headers.get('etag') ?? '');
    const revalidate = await runWrk(url, { seconds, headers: { 'If-None-Match': etag } });
    Object.assign(results, { 'facade 304 req/s': revalidate.requestsPerSec, 'facade 304 p99 ms': revalidate.p99Ms });
  } finally {
    facade.close();
  }
  return results;
}
