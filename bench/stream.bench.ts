// The push stream (`npm run bench -- stream`): change-to-client latency, from the start
// of the engine.apply that makes a change to the WebSocket client receiving its delta
// frame, with the clients in a child process pinned to the other core (taskset, when
// present), at 1, 100 and 1,000 subscribers while the simulator applies 1,000
// updates/s (a batch of 10 every 10 ms); messages/s and bytes/s delivered; and the
// server's memory with 10,000 idle subscribers. Times on both sides are
// performance.timeOrigin + performance.now() (one machine, one clock).
// BOARD (default small) picks the board; BENCH_STREAM_SECONDS (default 5) each run's length.
import { fork, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { startApp, type App } from '../service/app.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 5);
const BATCH = 10;
const INTERVAL_MS = 10;
const wall = () => performance.timeOrigin + performance.now();

interface ChildReport {
  /** clk -> receive times (ms) of its delta frames. */
  received: Record<string, number[]>;
  messages: number;
  bytes: number;
}

type ChildCommand = { op: 'connect'; port: number; count: number; filters: Record<string, unknown>[] } | { op: 'report' } | { op: 'exit' };

// ---- the client process -------------------------------------------------------------

async function clientProcess(): Promise<void> {
  const { WebSocket } = await import('ws');
  const sockets: InstanceType<typeof WebSocket>[] = [];
  let received: Record<string, number[]> = {};
  let messages = 0;
  let bytes = 0;
  process.on('message', async (command: ChildCommand) => {
    if (command.op === 'connect') {
      const opened: Promise<void>[] = [];
      for (let i = 0; i < command.count; i++) {
        const ws = new WebSocket(`ws://127.0.0.1:${command.port}/api/v1/stream`, { perMessageDeflate: false });
        sockets.push(ws);
        let imaged = false;
        opened.push(
          new Promise((resolve, reject) => {
            ws.on('error', reject);
            ws.on('message', (data: Buffer) => {
              const at = wall();
              messages++;
              bytes += data.length;
              // The op and clk are at the front of every message: no full parse on the hot path.
              const head = data.subarray(0, 120).toString('latin1');
              if (head.startsWith('{"op":"delta"')) {
                const clk = /"clk":"([^"]+)"/.exec(head)?.[1];
                if (clk !== undefined) (received[clk] ??= []).push(at);
              } else if (!imaged && head.startsWith('{"op":"image"') && head.includes('"segment":"end"')) {
                imaged = true;
                resolve();
              }
            });
            ws.on('open', () => ws.send(JSON.stringify({ op: 'subscribe', id: 's', filter: command.filters[i % command.filters.length], heartbeatMs: 30_000 })));
          }),
        );
        if (i % 200 === 199) await Promise.all(opened.slice(-200));
      }
      await Promise.all(opened);
      process.send!({ op: 'connected' });
    } else if (command.op === 'report') {
      process.send!({ op: 'report', report: { received, messages, bytes } satisfies ChildReport });
      received = {};
      messages = 0;
      bytes = 0;
    } else {
      for (const ws of sockets) ws.terminate();
      process.exit(0);
    }
  });
}

// ---- the server side -----------------------------------------------------------------

function pin(pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function startClient(): { send: (command: ChildCommand) => void; next: (op: string) => Promise<any>; pinned: boolean } {
  const child = fork(fileURLToPath(import.meta.url), ['--stream-client'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pinned = pin(child.pid!, 1);
  return {
    send: (command) => child.send(command),
    next: (op) =>
      new Promise((resolve) => {
        const on = (message: any) => {
          if (message.op !== op) return;
          child.off('message', on);
          resolve(message);
        };
        child.on('message', on);
      }),
    pinned,
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function latencyRun(app: App, clock: ManualClock, subscribers: number, filters: Record<string, unknown>[]): Promise<Record<string, number>> {
  const client = startClient();
  client.send({ op: 'connect', port: app.port, count: subscribers, filters });
  await client.next('connected');
  const applied = new Map<string, number>();
  const started = wall();
  const deadline = started + SECONDS * 1000;
  let next = started;
  while (wall() < deadline) {
    next += INTERVAL_MS;
    clock.advance(INTERVAL_MS);
    const at = wall();
    app.simulator.step(BATCH);
    applied.set(app.stream.currentClk(), at);
    const wait = next - wall();
    await sleep(wait > 0 ? wait : 0);
  }
  await sleep(500);
  const elapsed = (wall() - started) / 1000;
  client.send({ op: 'report' });
  const { report } = (await client.next('report')) as { report: ChildReport };
  client.send({ op: 'exit' });
  const latencies: number[] = [];
  for (const [clk, times] of Object.entries(report.received)) {
    const at = applied.get(clk);
    if (at !== undefined) for (const time of times) latencies.push(time - at);
  }
  latencies.sort((a, b) => a - b);
  return {
    [`${subscribers} subscribers: latency p50 ms`]: percentile(latencies, 50),
    [`${subscribers} subscribers: latency p99 ms`]: percentile(latencies, 99),
    [`${subscribers} subscribers: deltas measured`]: latencies.length,
    [`${subscribers} subscribers: messages/s`]: Math.round(report.messages / elapsed),
    [`${subscribers} subscribers: bytes/s`]: Math.round(report.bytes / elapsed),
    [`${subscribers} subscribers: client pinned to cpu 1`]: client.pinned ? 1 : 0,
  };
}

async function idleMemory(app: App, count: number): Promise<Record<string, number>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const client = startClient();
  client.send({ op: 'connect', port: app.port, count, filters: [{ eventId: ['no-such-event'] }] });
  await client.next('connected');
  await sleep(500);
  gc?.();
  const afterUsage = process.memoryUsage();
  client.send({ op: 'exit' });
  await sleep(500);
  return {
    [`${count} idle subscribers: server rss delta MB`]: Math.round((afterUsage.rss - before.rss) / 1e5) / 10,
    [`${count} idle subscribers: server heap delta MB`]: Math.round((afterUsage.heapUsed - before.heapUsed) / 1e5) / 10,
    [`${count} idle subscribers: bytes per subscriber (rss)`]: Math.round((afterUsage.rss - before.rss) / count),
  };
}

export async function benchStream(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'small') as BoardSize;
  const clock = new ManualClock(NOW);
  const board = generateBoard({ size, seed: 42, now: NOW });
  const dir = mkdtempSync(join(tmpdir(), 'bench-stream-'));
  // The simulator's timer stays off: the run steps it (1,000 updates/s) so each apply's start time is known.
  const app = await startApp({ clock, board, dbPath: join(dir, 'odds.db'), port: 0, env: {}, log: () => {}, simulatorRate: 0 });
  const serverPinned = pin(process.pid, 0);
  try {
    const leagues = app.engine.knownLeagues();
    const out: Record<string, number | string> = { board: size, 'server pinned to cpu 0': serverPinned ? 1 : 0, 'transport': app.server.transport };
    Object.assign(out, await latencyRun(app, clock, 1, [{}]));
    Object.assign(out, await latencyRun(app, clock, 100, leagues.map((league) => ({ league: [league] }))));
    Object.assign(out, await latencyRun(app, clock, 1000, leagues.map((league) => ({ league: [league] }))));
    Object.assign(out, await idleMemory(app, 10_000));
    return out;
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--stream-client')) await clientProcess();
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchStream();
  for (const [key, value] of Object.entries(result)) process.stdout.write(`${key.padEnd(56)} ${value}\n`);
}
