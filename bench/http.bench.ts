// The HTTP load run: the real app on the large board (BOARD overrides;
// simulator off so every run sees the same bytes), wrk with 64 connections on
// 127.0.0.1, the server process pinned to core 0 and wrk to core 1. Each scenario
// is measured next to its reference, in the same run: uWS writing the identical
// response bytes from a prebuilt Buffer (the ceiling for that body size), or a uWS
// hello world (for the 304 path). Scenario modules live in bench/scenarios/; add one
// with a file and a line in SCENARIO_MODULES.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { startApp, type App } from '../service/app.ts';
import { runWrk, startBufferServer, startHelloWorld, type BenchServer, type WrkResult } from './http-baseline.bench.ts';
import type { Scenario, ScenarioModule } from './scenarios/scenario.ts';
import { scenarios as oddsScenarios } from './scenarios/odds.ts';
import { scenarios as snapshotScenarios } from './scenarios/snapshot.ts';
import { scenarios as catalogScenarios } from './scenarios/catalog.ts';
import { scenarios as signalScenarios } from './scenarios/signals.ts';

const SCENARIO_MODULES: ScenarioModule[] = [oddsScenarios, snapshotScenarios, catalogScenarios, signalScenarios];

const NOW = Date.parse('2026-11-21T12:00:00Z');
const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const WARMUP_SECONDS = 1;

interface Primed {
  status: number;
  body: Buffer;
  contentType: string;
  etag: string;
}

/** One plain request, raw bytes back (no decompression). */
function prime(port: number, path: string, headers: Record<string, string> = {}): Promise<Primed> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? 'application/json'), etag: String(res.headers.etag ?? '') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function record(out: Record<string, number | string>, label: string, r: WrkResult): void {
  out[`${label} req/s`] = Math.round(r.requestsPerSec);
  out[`${label} MB/s`] = Number(r.mbPerSec.toFixed(1));
  out[`${label} p50 ms`] = r.p50Ms;
  out[`${label} p99 ms`] = r.p99Ms;
  if (r.errors > 0) out[`${label} errors`] = r.errors;
}

async function measure(url: string, headers: Record<string, string>): Promise<WrkResult> {
  await runWrk(url, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, headers });
  return runWrk(url, { connections: CONNECTIONS, seconds: SECONDS, headers });
}

/**
 * Hello world again, next to a scenario compared with it: the throughput of this shared
 * machine drifts by up to 15% within one run (hello world measured 135k-176k req/s in
 * the same run), so a reference taken once at the start made 304 ratios swing 0.71-0.94.
 */
async function helloNow(): Promise<WrkResult> {
  const hello = await startHelloWorld();
  try {
    return await measure(`http://127.0.0.1:${hello.port}/`, {});
  } finally {
    hello.close();
  }
}

async function runScenario(app: App, scenario: Scenario, out: Record<string, number | string>): Promise<void> {
  const headers = { ...scenario.headers };
  const primed = await prime(app.port, scenario.path, headers);
  if (primed.status !== 200) throw new Error(`${scenario.name}: ${scenario.path} answered ${primed.status}: ${primed.body.toString().slice(0, 200)}`);
  if (scenario.ifNoneMatch) headers['If-None-Match'] = primed.etag;
  out[`${scenario.name} body bytes`] = scenario.ifNoneMatch ? 0 : primed.body.length;
  const url = `http://127.0.0.1:${app.port}${scenario.path}`;
  if (scenario.reference === 'hello') {
    // interleaved: hello, route, hello, route, hello; the ratio of the means
    const hellos = [await helloNow()];
    const runs: WrkResult[] = [];
    for (let i = 0; i < 2; i++) {
      runs.push(await measure(url, headers));
      hellos.push(await helloNow());
    }
    const mean = (rs: WrkResult[]): number => rs.reduce((sum, r) => sum + r.requestsPerSec, 0) / rs.length;
    record(out, scenario.name, runs[runs.length - 1]!);
    out[`${scenario.name} req/s (mean of 2)`] = Math.round(mean(runs));
    out[`${scenario.name}: hello world around it, req/s (mean of 3)`] = Math.round(mean(hellos));
    out[`${scenario.name} / hello world`] = Number((mean(runs) / mean(hellos)).toFixed(3));
    return;
  }
  const result = await measure(url, headers);
  record(out, scenario.name, result);
  const ceiling = await startBufferServer(primed.body, primed.contentType);
  try {
    const reference = await measure(`http://127.0.0.1:${ceiling.port}/`, {});
    record(out, `${scenario.name} ceiling`, reference);
    out[`${scenario.name} / ceiling`] = Number((result.requestsPerSec / reference.requestsPerSec).toFixed(3));
  } finally {
    ceiling.close();
  }
}

export async function benchHttp(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const out: Record<string, number | string> = { board: size, connections: CONNECTIONS, 'seconds per run': SECONDS };
  const dir = mkdtempSync(join(tmpdir(), 'odds-bench-http-'));
  const started = performance.now();
  const app = await startApp({
    clock: new ManualClock(NOW),
    board: { size, seed: Number(process.env.SEED ?? 42), now: NOW },
    dbPath: join(dir, 'odds.db'),
    port: 0,
    simulatorRate: 0,
    // The transport as `npm start` would pick it from this environment (TRANSPORT is
    // read from the process's); UWS_DIRECT=1 measures uWS alone on the port.
    env: { UWS_DIRECT: process.env.UWS_DIRECT ?? '0' },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  out['app start s'] = Number(((performance.now() - started) / 1000).toFixed(1));
  // the snapshot's first version is built in the background after the server listens
  // (issue 36): measured during that build, the first scenarios (and the uWS hello world
  // in this process) would share the event loop with it
  await app.snapshot.whenCurrent(false);
  out['first snapshot built s'] = Number(((performance.now() - started) / 1000).toFixed(1));
  out.transport = app.server.transport;
  out['live rows'] = app.engine.liveRows;
  let hello: BenchServer | null = null;
  try {
    hello = await startHelloWorld();
    const helloResult = await measure(`http://127.0.0.1:${hello.port}/`, {});
    hello.close();
    hello = null;
    record(out, 'uws hello world', helloResult);
    for (const module of SCENARIO_MODULES) {
      for (const scenario of await module(app)) await runScenario(app, scenario, out);
    }
  } finally {
    hello?.close();
    await app.close();
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
