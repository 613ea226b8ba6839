// What a client sees of freshness and what it costs the service per connection (issue 28).
//
// Snapshot staleness (BOARD, default large; the simulator at BENCH_CLIENTS_RATE, default
// 1,000 updates/s; SNAPSHOT_MAX_AGE_MS 2,000 as the service runs it): each poll is the
// route's call (BoardSnapshot.fresh: the newest version, or the next one when the newest
// misses a change older than the bound) and its staleness is the age of the oldest
// change the answered version does not show, at the moment it is answered; the wait is
// how long the poll waited for a fresh version (0 when answered at once). Three
// patterns: polled every 100 ms (BENCH_CLIENTS_POLL_SECONDS, default 20 s), every 15 s
// (BENCH_CLIENTS_SLOW_POLLS polls, default 4), and once after an idle spell with no poll
// (BENCH_CLIENTS_IDLE_SECONDS, default 600), for the variant without history (refreshed
// whatever the polls) and the one with history (refreshed only while polled).
//
// Memory per push-stream connection: the service as a child process (BOARD=small, no
// ticks); resident memory (VmRSS) before and after BENCH_CLIENTS_CONNECTIONS (default
// 1,000) idle WebSocket connections, then after 10 subscriptions on each of 100 of them
// (one event's rows each, so the images are small).
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { Clock } from '../engine/clock.ts';
import { OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { BoardSize } from '../engine/model.ts';
import { Simulator } from '../fixtures/simulator.ts';
import { BoardSnapshot, type SnapshotBody } from '../engine/snapshot/boardSnapshot.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { startServiceChild } from '../fixtures/harness/service-child.ts';

type Out = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const MAX_AGE_MS = 2000;
const env = (name: string, fallback: number): number => (process.env[name] === undefined ? fallback : Number(process.env[name]));
const round = (value: number, digits = 1): number => Number(value.toFixed(digits));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

interface Poll {
  staleness: number;
  wait: number;
}

/** One poll as the route makes it. */
async function poll(snapshot: BoardSnapshot, withHistory: boolean): Promise<Poll> {
  const started = performance.now();
  let answer: SnapshotBody | Promise<SnapshotBody> | null = snapshot.fresh(withHistory);
  if (answer === null) answer = snapshot.whenCurrent(withHistory);
  if (answer instanceof Promise) await answer;
  return { staleness: snapshot.ageMs(withHistory), wait: performance.now() - started };
}

function report(out: Out, key: string, polls: Poll[]): void {
  const staleness = polls.map((p) => p.staleness);
  const waits = polls.map((p) => p.wait);
  out[`${key}: staleness p50 / p99 / max ms`] = `${round(percentile(staleness, 50))} / ${round(percentile(staleness, 99))} / ${round(Math.max(...staleness))}`;
  out[`${key}: wait p50 / p99 / max ms (${polls.length} polls)`] = `${round(percentile(waits, 50))} / ${round(percentile(waits, 99))} / ${round(Math.max(...waits))}`;
}

async function staleness(out: Out): Promise<void> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const rate = env('BENCH_CLIENTS_RATE', 1000);
  // the board's clock follows the wall clock from NOW (as a running service's does): rows cool and the 30 s watch lapses in real time
  const started = Date.now();
  const clock: Clock = { now: () => NOW + (Date.now() - started) };
  const engine = new OddsEngine(clock);
  loadBoard(engine, generateBoard({ size, seed: 42, now: NOW }));
  const snapshot = new BoardSnapshot(engine, { clock, maxAgeMs: MAX_AGE_MS, historyIdleMs: Infinity });
  snapshot.current(false);
  await snapshot.whenCurrent(true);
  const sim = new Simulator(engine, clock, { ratePerSecond: rate, seed: 28 });
  const label = `${size} board, ${rate} updates/s`;
  sim.start();
  try {
    for (const withHistory of [false, true]) {
      const variant = withHistory ? 'with history' : 'plain';
      const fast: Poll[] = [];
      const until = performance.now() + env('BENCH_CLIENTS_POLL_SECONDS', 20) * 1000;
      while (performance.now() < until) {
        fast.push(await poll(snapshot, withHistory));
        await sleep(100);
      }
      report(out, `${label}, ${variant}, polled every 100 ms`, fast);
      const slow: Poll[] = [];
      for (let i = 0; i < env('BENCH_CLIENTS_SLOW_POLLS', 4); i++) {
        await sleep(15_000);
        slow.push(await poll(snapshot, withHistory));
      }
      report(out, `${label}, ${variant}, polled every 15 s`, slow);
    }
    const idleSeconds = env('BENCH_CLIENTS_IDLE_SECONDS', 600);
    await sleep(idleSeconds * 1000);
    for (const withHistory of [false, true]) report(out, `${label}, ${withHistory ? 'with history' : 'plain'}, once after ${idleSeconds} s without a poll`, [await poll(snapshot, withHistory)]);
  } finally {
    sim.stop();
    snapshot.close();
  }
}

function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) * 1024;
}

function openSocket(port: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/stream`, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function connectionMemory(out: Out): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-clients-'));
  const child = await startServiceChild(dir, { BOARD: 'small', STREAM_MAX_ANONYMOUS_CONNECTIONS: '100000' });
  const sockets: WebSocket[] = [];
  try {
    const pid = child.proc.pid!;
    const odds = (await (await fetch(`http://127.0.0.1:${child.port}/api/v1/odds?limit=1`)).json()) as { data: { eventId: string }[] };
    const eventId = odds.data[0]!.eventId;
    await sleep(2000);
    const base = rssOf(pid);
    const n = env('BENCH_CLIENTS_CONNECTIONS', 1000);
    for (let i = 0; i < n; i++) sockets.push(await openSocket(child.port));
    await sleep(2000);
    const withConnections = rssOf(pid);
    out[`memory per idle stream connection (${n}, resident, KiB)`] = round((withConnections - base) / n / 1024, 2);
    let images = 0;
    const subscribers = sockets.slice(0, 100);
    for (const ws of subscribers) ws.on('message', (data: Buffer) => (images += data.toString().includes('"segment":"end"') ? 1 : 0));
    for (const [i, ws] of subscribers.entries()) for (let k = 0; k < 10; k++) ws.send(JSON.stringify({ op: 'subscribe', id: `s${i}-${k}`, filter: { eventId: [eventId] } }));
    const deadline = Date.now() + 30_000;
    while (images < subscribers.length * 10 && Date.now() < deadline) await sleep(50);
    await sleep(2000);
    const withSubscriptions = rssOf(pid);
    out[`memory per subscription (1,000 on one event's rows, resident, KiB)`] = round((withSubscriptions - withConnections) / 1000 / 1024, 2);
  } finally {
    for (const ws of sockets) ws.terminate();
    await child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchClients(): Promise<Out> {
  const out: Out = {};
  if (process.env.BENCH_CLIENTS_MEMORY_ONLY !== '1') await staleness(out);
  await connectionMemory(out);
  return out;
}
