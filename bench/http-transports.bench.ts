// What each way of serving HTTP costs (`npm run bench -- transports`): the odds
// scenarios of the http section, served by the same board three times in one process:
// uWebSockets.js alone on the port (UWS_DIRECT=1), uWebSockets.js behind the front
// (TRANSPORT=uws: where the build can adopt sockets, uWS owns each connection whose
// first request it answers right; elsewhere requests are relayed to it), and node:http.
// `npm start` picks the front where it adopts and node:http where it would relay. Measured with wrk in interleaved rounds (direct, front, node, direct, ...)
// so the drift of a shared machine falls on all three, together with the http
// section's reference (uWS writing the same bytes from a prebuilt Buffer, or a hello
// world for the 304); each scenario reports every target's median requests/s and median
// p99 over its rounds, and the ratios to uWS alone. BENCH_TRANSPORTS=uws-direct,node and
// BENCH_SCENARIOS=limit=1000 narrow a run. BOARD (default large), BENCH_HTTP_SECONDS (default 5) and
// BENCH_TRANSPORT_ROUNDS (default 3) as in the http section.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { startApp, type App } from '../service/app.ts';
import { loadUws } from '../http/transport/loadUws.ts';
import { UwsTransport } from '../http/transport/uwsTransport.ts';
import { runWrk, startBufferServer, startHelloWorld, type BenchServer, type WrkResult } from './http-baseline.bench.ts';
import { scenarios as oddsScenarios } from './scenarios/odds.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_TRANSPORT_ROUNDS ?? 3);

/** The three ways the service can serve HTTP, with the environment that selects each. */
export const SERVINGS = {
  'uws-direct': { TRANSPORT: 'uws', UWS_DIRECT: '1' },
  'uws-front': { TRANSPORT: 'uws', UWS_DIRECT: '0' },
  node: { TRANSPORT: 'node', UWS_DIRECT: '0' },
} as const;
export type Serving = keyof typeof SERVINGS;

/** The ETag of one plain request (for the 304 scenario). */
function etagOf(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(String(res.headers.etag ?? '')) : reject(new Error(`${path} answered ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

/**
 * startApp reads UWS_DIRECT from the env it is given (service/config.ts), and the server
 * takes its transport from TRANSPORT in the process environment (the variable `npm
 * start` reads), so both are set, and the caller's TRANSPORT is put back afterwards.
 */
async function startServing(serving: Serving, board: ReturnType<typeof generateBoard>, dir: string): Promise<App> {
  const env = SERVINGS[serving];
  const previous = process.env.TRANSPORT;
  process.env.TRANSPORT = env.TRANSPORT;
  try {
    return await startApp({ clock: new ManualClock(NOW), board, dbPath: join(dir, `${serving}.db`), port: 0, simulatorRate: 0, env: { ...env }, log: (line) => process.stderr.write(`${line}\n`) });
  } finally {
    if (previous === undefined) delete process.env.TRANSPORT;
    else process.env.TRANSPORT = previous;
  }
}

type Target = Serving | 'ceiling';

/** The http section's reference for a scenario, serving what the app answers to one plain request of it. */
async function startReference(appPort: number, path: string, kind: 'ceiling' | 'hello'): Promise<BenchServer> {
  if (kind === 'hello') return startHelloWorld();
  const { body, contentType } = await new Promise<{ body: Buffer; contentType: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: appPort, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ body: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? 'application/json') }));
      })
      .on('error', reject);
  });
  return startBufferServer(body, contentType);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function benchTransports(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const uws = loadUws();
  const servings: Serving[] = uws.ok ? ['uws-direct', 'uws-front', 'node'] : ['node'];
  const only = process.env.BENCH_TRANSPORTS?.split(',').filter((name): name is Serving => name in SERVINGS);
  const measured = only !== undefined && only.length > 0 ? servings.filter((serving) => only.includes(serving)) : servings;
  const out: Record<string, number | string> = { board: size, connections: CONNECTIONS, 'seconds per run': SECONDS, rounds: ROUNDS };
  out['uWS transport'] = uws.ok ? uws.description : `not measured: ${uws.summary}`;
  if (uws.ok) {
    const adoption = new UwsTransport(uws.uws, uws.description).adoption();
    out['uws-front'] = adoption.ok ? 'adopts connections (uWS owns each one whose first request it answers right)' : `relays requests over a unix socket (${adoption.reason})`;
    out['default on a bare port'] = adoption.ok ? 'uws-front' : 'node';
  }
  const board = generateBoard({ size, seed: Number(process.env.SEED ?? 42), now: NOW });
  const dir = mkdtempSync(join(tmpdir(), 'odds-bench-transports-'));
  const apps = new Map<Serving, App>();
  try {
    for (const serving of measured) apps.set(serving, await startServing(serving, board, dir));
    const filter = process.env.BENCH_SCENARIOS;
    for (const scenario of oddsScenarios(apps.values().next().value!)) {
      if (filter !== undefined && !scenario.name.includes(filter)) continue;
      // The reference of the http section, measured in the same rounds: uWS writing the
      // identical bytes from a prebuilt Buffer (the ceiling), or a hello world for a 304.
      const reference = uws.ok ? await startReference(apps.values().next().value!.port, scenario.path, scenario.reference) : null;
      const targets: Target[] = reference === null ? [...measured] : [...measured, 'ceiling'];
      const results = new Map<Target, WrkResult[]>(targets.map((target) => [target, []]));
      try {
        for (let round = 0; round < ROUNDS; round++) {
          for (const target of targets) {
            const port = target === 'ceiling' ? reference!.port : apps.get(target)!.port;
            const headers: Record<string, string> = { ...scenario.headers };
            if (scenario.ifNoneMatch && target !== 'ceiling') headers['If-None-Match'] = await etagOf(port, scenario.path);
            const url = `http://127.0.0.1:${port}${scenario.path}`;
            if (round === 0) await runWrk(url, { connections: CONNECTIONS, seconds: 1, headers });
            results.get(target)!.push(await runWrk(url, { connections: CONNECTIONS, seconds: SECONDS, headers }));
          }
        }
      } finally {
        reference?.close();
      }
      const rps = new Map<Target, number>();
      for (const [target, runs] of results) {
        const label = target === 'ceiling' ? (scenario.reference === 'ceiling' ? 'ceiling' : 'hello world') : target;
        rps.set(target, median(runs.map((r) => r.requestsPerSec)));
        out[`${scenario.name} ${label} req/s (median of ${runs.length})`] = Math.round(rps.get(target)!);
        out[`${scenario.name} ${label} p99 ms (median)`] = median(runs.map((r) => r.p99Ms));
        const errors = runs.reduce((sum, r) => sum + r.errors, 0);
        if (errors > 0) out[`${scenario.name} ${label} errors`] = errors;
      }
      const direct = rps.get('uws-direct');
      if (direct !== undefined) {
        for (const target of targets) {
          if (target !== 'uws-direct') out[`${scenario.name} ${target} / uws-direct`] = Number((rps.get(target)! / direct).toFixed(3));
        }
      }
    }
  } finally {
    for (const app of apps.values()) await app.close();
    rmSync(dir, { recursive: true, force: true });
    unpin();
  }
  return out;
}

/** runWrk pinned this process to core 0; later bench sections get every core back. */
function unpin(): void {
  try {
    execFileSync('taskset', ['-pc', `0-${availableParallelism() - 1}`, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // no taskset: nothing was pinned
  }
}
