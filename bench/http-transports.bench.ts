// What each transport costs (`npm run bench -- transports`): the odds scenarios of the
// http section, served by the same board twice in one process, once over the native
// uWebSockets.js transport and once over node:http, measured with wrk in interleaved
// rounds (uws, node, uws, node, uws) so the drift of a shared machine falls on both.
// Requests/s is the mean of a transport's rounds, p99 the worst of them. BOARD (default
// large) and BENCH_HTTP_SECONDS (default 5) as in the http section.
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
import type { TransportKind } from '../http/transport/transport.ts';
import { runWrk, type WrkResult } from './http-baseline.bench.ts';
import { scenarios as oddsScenarios } from './scenarios/odds.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const ROUNDS: readonly TransportKind[] = ['uws', 'node', 'uws', 'node', 'uws'];

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
 * startApp's server takes its transport from TRANSPORT (the variable `npm start` reads),
 * so each app is started with it set, and the caller's value is put back afterwards.
 */
async function startOn(transport: TransportKind, board: ReturnType<typeof generateBoard>, dir: string): Promise<App> {
  const previous = process.env.TRANSPORT;
  process.env.TRANSPORT = transport;
  try {
    return await startApp({ clock: new ManualClock(NOW), board, dbPath: join(dir, `${transport}.db`), port: 0, simulatorRate: 0, env: {}, log: (line) => process.stderr.write(`${line}\n`) });
  } finally {
    if (previous === undefined) delete process.env.TRANSPORT;
    else process.env.TRANSPORT = previous;
  }
}

export async function benchTransports(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const uws = loadUws();
  const out: Record<string, number | string> = { board: size, connections: CONNECTIONS, 'seconds per run': SECONDS };
  const rounds = uws.ok ? ROUNDS : ROUNDS.filter((kind) => kind === 'node');
  out['uWS transport'] = uws.ok ? uws.description : `not measured: ${uws.summary}`;
  const board = generateBoard({ size, seed: Number(process.env.SEED ?? 42), now: NOW });
  const dir = mkdtempSync(join(tmpdir(), 'odds-bench-transports-'));
  const apps = new Map<TransportKind, App>();
  try {
    for (const kind of new Set(rounds)) apps.set(kind, await startOn(kind, board, dir));
    for (const scenario of oddsScenarios(apps.values().next().value!)) {
      const results: Record<TransportKind, WrkResult[]> = { uws: [], node: [] };
      for (const kind of rounds) {
        const app = apps.get(kind)!;
        const headers: Record<string, string> = { ...scenario.headers };
        if (scenario.ifNoneMatch) headers['If-None-Match'] = await etagOf(app.port, scenario.path);
        const url = `http://127.0.0.1:${app.port}${scenario.path}`;
        await runWrk(url, { connections: CONNECTIONS, seconds: 1, headers });
        results[kind].push(await runWrk(url, { connections: CONNECTIONS, seconds: SECONDS, headers }));
      }
      for (const kind of ['uws', 'node'] as const) {
        const runs = results[kind];
        if (runs.length === 0) continue;
        out[`${scenario.name} ${kind} req/s (mean of ${runs.length})`] = Math.round(runs.reduce((sum, r) => sum + r.requestsPerSec, 0) / runs.length);
        out[`${scenario.name} ${kind} p99 ms (worst)`] = Math.max(...runs.map((r) => r.p99Ms));
        const errors = runs.reduce((sum, r) => sum + r.errors, 0);
        if (errors > 0) out[`${scenario.name} ${kind} errors`] = errors;
      }
      if (results.uws.length > 0) {
        const mean = (runs: WrkResult[]) => runs.reduce((sum, r) => sum + r.requestsPerSec, 0) / runs.length;
        out[`${scenario.name} node / uws`] = Number((mean(results.node) / mean(results.uws)).toFixed(3));
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
