// Tick to steam event, end to end: the service (startApp, durable in a temp DATA_DIR,
// every signal on as it serves) in this process, and in a child process a feed posting
// batches to the ingest listener (POST /ingest/v1/batches, NDJSON) and a subscriber on
// the signal stream (GET /api/v1/stream/signals?topic=steam, SSE), as they are in
// production: other processes, so their work is not on the service's event loop. Each
// sample is one batch of STEAM_BENCH_BATCH ticks, ordinary ones on random rows plus one
// fair-line book's price shortened by 3 implied points; its latency is from the POST's
// first byte to the move's SSE event reaching the subscriber (and, apart, to the
// acknowledgement), both timed in the child. The board's clock moves a window on
// between samples, so each move starts from the row's previous price.
//
// The acknowledgement waits for the log's fsync (WAL_FSYNC, default on: the product's
// default) and the steam event is pushed when the batch applies. Where the time goes is
// reported by stage, from the service's own hooks (wall-clock instants shared by the two
// processes: performance.timeOrigin + performance.now()): the body reaching the write
// path, the log record durable, the steam event written to its socket, the subscriber
// reading it. Beside it: the event loop's delay, the garbage collector's pauses and the
// snapshot's main-thread time during the samples (the snapshot refreshes whenever the
// board moves: SNAPSHOT_MAX_AGE_MS).
//
//   STEAM_BENCH_SIZE=small|medium|large (default large), STEAM_BENCH_SAMPLES (default 500),
//   STEAM_BENCH_BATCH (default 100), STEAM_BENCH_FSYNC=0|1 (default 1),
//   STEAM_BENCH_RATE batches a second (default 10: 1,000 ticks a second, the rate the
//   snapshot's targets are stated at; 0: each batch as soon as the last one's event came),
//   STEAM_BENCH_GROUP_TOPIC=fair_line|best_price|ev|middle (default none): one more
//   subscriber, on that group topic (its pushes re-read every market group the ticks marked)
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../engine/clock.ts';
import { americanToDecimal, decimalToAmerican, type BoardSize } from '../engine/model.ts';
import { NO_PRICE } from '../engine/oddsStore.ts';
import { mulberry32 } from '../engine/random.ts';
import { startApp } from '../service/app.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const TOKEN = 'steam-bench-token';
const SHARP = new Set(['pinnacle', 'circa', 'bookmaker']);

type Measurements = Record<string, number | string>;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between the two processes. */
const instant = (): number => performance.timeOrigin + performance.now();

// ---- the child: feed and subscriber --------------------------------------------------

type ToChild = { op: 'open'; port: number; ingestPort: number; groupTopic: string | null } | { op: 'sample'; id: string; body: string } | { op: 'close' };
type FromChild = { op: 'opened' } | { op: 'sampled'; start: number; acked: number; status: number; at: number } | { op: 'groupMessages'; count: number; bytes: number };

/** An SSE stream: calls `onEvent` with each event's name and data as it arrives. */
function openStream(port: number, path: string, onEvent: (event: string, data: string) => void): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`signal stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) onEvent(event, data);
        }
      });
      resolve({ close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

function post(port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/ingest/v1/batches', method: 'POST', headers: { 'Content-Type': 'application/x-ndjson', 'Content-Length': Buffer.byteLength(body), Authorization: `Bearer ${TOKEN}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function clientProcess(): Promise<void> {
  const send = (message: FromChild) => process.send!(message);
  let ingestPort = 0;
  let waiting: { id: string; resolve: (at: number) => void } | null = null;
  const streams: { close(): void }[] = [];
  let groupMessages = 0;
  let groupBytes = 0;
  process.on('message', async (message: ToChild) => {
    if (message.op === 'open') {
      ingestPort = message.ingestPort;
      streams.push(await openStream(message.port, '/api/v1/stream/signals?topic=steam', (event, data) => {
        if (event !== 'steam' || waiting === null) return;
        const at = instant();
        if (/"oddsId":"([^"]+)"/.exec(data)?.[1] !== waiting.id) return;
        const w = waiting;
        waiting = null;
        w.resolve(at);
      }));
      if (message.groupTopic !== null) {
        streams.push(await openStream(message.port, `/api/v1/stream/signals?topic=${message.groupTopic}`, (event, data) => {
          if (event !== message.groupTopic) return;
          groupMessages++;
          groupBytes += data.length;
        }));
      }
      send({ op: 'opened' });
    } else if (message.op === 'sample') {
      const arrived = new Promise<number>((resolve) => (waiting = { id: message.id, resolve }));
      const start = instant();
      const status = await post(ingestPort, message.body);
      const acked = instant();
      const at = status !== 200 ? NaN : await Promise.race([arrived, new Promise<number>((resolve) => setTimeout(() => resolve(NaN), 2000))]);
      waiting = null;
      send({ op: 'sampled', start, acked, status, at });
    } else {
      for (const stream of streams) stream.close();
      send({ op: 'groupMessages', count: groupMessages, bytes: groupBytes });
      process.disconnect();
    }
  });
}

// ---- the service and the samples ----------------------------------------------------

function startClient() {
  const child = fork(fileURLToPath(import.meta.url), ['--steam-client'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T extends FromChild['op']>(op: T): Promise<Extract<FromChild, { op: T }>> =>
    new Promise((resolve, reject) => {
      const on = (message: FromChild) => {
        if (message.op !== op) return;
        child.off('message', on);
        child.off('exit', exited);
        resolve(message as Extract<FromChild, { op: T }>);
      };
      const exited = (code: number | null) => reject(new Error(`the bench client exited (${code}) before answering ${op}`));
      child.on('message', on);
      child.once('exit', exited);
    });
  return { child, send: (message: ToChild) => child.send(message), next };
}

const percentile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const round = (value: number, digits = 3): number => Math.round(value * 10 ** digits) / 10 ** digits;

export async function benchTickToSteam(): Promise<Measurements> {
  const size = (process.env.STEAM_BENCH_SIZE ?? process.env.SIGNALS_BENCH_SIZE ?? 'large') as BoardSize;
  const samples = Number(process.env.STEAM_BENCH_SAMPLES ?? 500);
  const batchSize = Math.max(1, Number(process.env.STEAM_BENCH_BATCH ?? 100));
  const fsync = process.env.STEAM_BENCH_FSYNC ?? '1';
  const groupTopic = process.env.STEAM_BENCH_GROUP_TOPIC ?? null;
  const rate = Number(process.env.STEAM_BENCH_RATE ?? 10);
  const dir = mkdtempSync(join(tmpdir(), 'steam-bench-'));
  const clock = new ManualClock(NOW);
  const app = await startApp({
    clock,
    board: { size, seed: 42, now: NOW },
    dataDir: join(dir, 'data'),
    ingestPort: 0,
    port: 0,
    env: { INGEST_TOKEN: TOKEN, WAL_FSYNC: fsync, CHECKPOINT_INTERVAL_MS: '0', ALERTS: '0', LOG_LEVEL: 'warn' },
    log: () => {},
  });
  const out: Measurements = {
    'steam latency board': size,
    'steam latency: batch / samples / batches a second / WAL_FSYNC / group topic': `${batchSize} / ${samples} / ${rate > 0 ? rate : 'back to back'} / ${fsync} / ${groupTopic ?? 'none'}`,
  };
  const client = startClient();
  try {
    const ingestPort = (await app.durable!.listen()).port;
    const engine = app.engine;
    const s = engine.store;
    const sharp: number[] = [];
    const ordinary: number[] = [];
    for (let slot = 0; slot < s.size; slot++) {
      if (!s.isLive(slot) || s.priceAmerican[slot] === NO_PRICE || s.suspended[slot] === 1) continue;
      // a fair-line book's row in a market group (futures and yes/no rows have none)
      if (SHARP.has(s.books.get(s.book[slot])) && americanToDecimal(s.priceAmerican[slot]) > 1.4 && app.signals.groups.groupOf(slot) >= 0) sharp.push(slot);
      else ordinary.push(slot);
    }
    const loaded = s.priceAmerican.slice(0, s.size);
    const rand = mulberry32(17);
    // The steady state: the snapshot's first version (built in the background once the
    // server listens, seconds on the medium board) is not in the figures.
    await app.snapshot.whenCurrent(false);
    client.send({ op: 'open', port: app.port, ingestPort, groupTopic });
    await client.next('opened');
    // Where the time goes, per sample: the write path's own timestamps (chained onto the
    // hooks the composition root set for its metrics) and the steam listener's.
    const board = app.durable!.durable;
    const stage = { received: NaN, fsynced: NaN, fsyncMs: NaN, steam: NaN };
    const onBatch = board.ingest.onBatch;
    board.ingest.onBatch = (via, outcome, seconds, changes, error) => {
      stage.received = instant() - seconds * 1000;
      onBatch?.(via, outcome, seconds, changes, error);
    };
    const onFsync = board.log.onFsync;
    board.log.onFsync = (seconds, records) => {
      stage.fsynced = instant();
      stage.fsyncMs = seconds * 1000;
      onFsync?.(seconds, records);
    };
    // registered after the signal stream's: called once the event is written to the socket
    const offSteam = app.signals.onSteam(() => { stage.steam = instant(); });
    const latencies: number[] = [];
    const acks: number[] = [];
    const toReceived: number[] = [];
    const toDurable: number[] = [];
    const fsyncs: number[] = [];
    const toWritten: number[] = [];
    const toClient: number[] = [];
    let missed = 0;
    const warmUp = Math.min(20, Math.floor(samples / 10));
    const loop = monitorEventLoopDelay({ resolution: 1 });
    const gcPauses: number[] = [];
    let fullCollections = 0;
    let fullPauseMax = 0;
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        gcPauses.push(entry.duration);
        // NODE_PERFORMANCE_GC_MAJOR (4): a full mark-sweep-compact
        if (((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind === 4) {
          fullCollections++;
          fullPauseMax = Math.max(fullPauseMax, entry.duration);
        }
      }
    });
    let snapshotBefore = { refreshes: 0, refreshMs: 0, finalsDeferred: 0 };
    const firstAt = performance.now();
    for (let i = 0; i < warmUp + samples; i++) {
      if (rate > 0) {
        const wait = firstAt + (i * 1000) / rate - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      if (i === warmUp) {
        loop.enable();
        gc.observe({ entryTypes: ['gc'] });
        const plain = app.snapshot.stats()[0]!;
        snapshotBefore = { refreshes: plain.refreshes, refreshMs: plain.refreshMs, finalsDeferred: plain.finalsDeferred };
      }
      const lines: string[] = [];
      for (let j = 0; j < batchSize - 1; j++) {
        const slot = ordinary[Math.floor(rand() * ordinary.length)]!;
        lines.push(JSON.stringify({ op: 'price', id: s.idOf(slot), priceAmerican: decimalToAmerican(americanToDecimal(loaded[slot]) * (1 + (rand() - 0.5) * 0.02)) }));
      }
      const slot = sharp[Math.floor(rand() * sharp.length)]!;
      const id = s.idOf(slot);
      const implied = 1 / americanToDecimal(s.priceAmerican[slot]);
      lines.push(JSON.stringify({ op: 'price', id, priceAmerican: decimalToAmerican(1 / Math.min(0.97, implied + 0.03)) }));
      clock.advance(61_000); // past the window: the move starts from the row's previous price
      stage.received = stage.fsynced = stage.fsyncMs = stage.steam = NaN;
      client.send({ op: 'sample', id, body: `${lines.join('\n')}\n` });
      const sample = await client.next('sampled');
      if (sample.status !== 200) throw new Error(`ingest answered ${sample.status}`);
      if (i < warmUp) continue;
      acks.push(sample.acked - sample.start);
      if (Number.isNaN(sample.at)) {
        missed++;
        continue;
      }
      latencies.push(sample.at - sample.start);
      toReceived.push(stage.received - sample.start);
      toDurable.push(stage.fsynced - stage.received);
      if (!Number.isNaN(stage.fsyncMs)) fsyncs.push(stage.fsyncMs);
      toWritten.push(stage.steam - (Number.isNaN(stage.fsynced) ? stage.received : stage.fsynced));
      toClient.push(sample.at - stage.steam);
    }
    loop.disable();
    gc.disconnect();
    offSteam();
    const plain = app.snapshot.stats()[0]!;
    client.send({ op: 'close' });
    const group = await client.next('groupMessages');
    for (const list of [latencies, acks, toReceived, toDurable, fsyncs, toWritten, toClient]) list.sort((a, b) => a - b);
    const p5099 = (list: number[]) => `${round(percentile(list, 0.5))} / ${round(percentile(list, 0.99))}`;
    out['tick to steam SSE event (ingest POST -> event), p50 ms'] = round(percentile(latencies, 0.5));
    out['tick to steam SSE event (ingest POST -> event), p99 ms'] = round(percentile(latencies, 0.99));
    out['tick to steam SSE event, max ms'] = round(latencies[latencies.length - 1] ?? NaN);
    out['ingest acknowledgement of the same batches, p50 / p99 ms'] = p5099(acks);
    out['  stage POST sent -> the write path has the body, p50 / p99 ms'] = p5099(toReceived);
    out["  stage body -> log record fsync'd (WAL_FSYNC=0: written), p50 / p99 ms"] = p5099(toDurable);
    out['    of which the fsync itself (the disk), p50 / p99 ms'] = fsyncs.length === 0 ? 'none' : p5099(fsyncs);
    out['  stage durable -> applied, steam event on its socket, p50 / p99 ms'] = p5099(toWritten);
    out['  stage on its socket -> read by the subscriber, p50 / p99 ms'] = p5099(toClient);
    out['event loop delay during the samples, p50 / p99 / max ms'] = `${round(loop.percentile(50) / 1e6)} / ${round(loop.percentile(99) / 1e6)} / ${round(loop.max / 1e6)}`;
    gcPauses.sort((a, b) => a - b);
    out['GC pauses during the samples: count / p99 / max ms (of them full: count / max ms)'] = `${gcPauses.length} / ${round(percentile(gcPauses, 0.99))} / ${round(gcPauses[gcPauses.length - 1] ?? 0)} (${fullCollections} / ${round(fullPauseMax)})`;
    out['snapshot versions / main-thread ms / moments put off, during the samples'] = `${plain.refreshes - snapshotBefore.refreshes} / ${round(plain.refreshMs - snapshotBefore.refreshMs, 1)} / ${plain.finalsDeferred - snapshotBefore.finalsDeferred}`;
    if (groupTopic !== null) out[`${groupTopic} messages / MiB read by its subscriber`] = `${group.count} / ${round(group.bytes / 1048576, 1)}`;
    out['steam samples / without an event in 2 s'] = `${latencies.length} / ${missed}`;
  } finally {
    if (client.child.exitCode === null) client.child.kill();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (process.argv.includes('--steam-client')) await clientProcess();
else if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await benchTickToSteam();
  for (const [key, value] of Object.entries(results)) console.log(key.padEnd(72), value);
  process.exit(0);
}
