// Tick to steam event, end to end: the service (startApp, durable in a temp DATA_DIR,
// every signal on as it serves) with one client on the signal stream
// (GET /api/v1/stream/signals?topic=steam, SSE) and a feed posting batches to the
// ingest listener (POST /ingest/v1/batches, NDJSON). Each sample is one batch of
// STEAM_BENCH_BATCH ticks, ordinary ones on random rows plus one fair-line book's price
// shortened by 3 implied points; its latency is from the POST's first byte to the move's
// SSE event reaching the client (and, apart, to the acknowledgement). The board's clock
// moves a window on between samples, so each move starts from the row's previous price.
//
// Client and service share this process and its event loop (the client's parsing is in
// the figure); the acknowledgement waits for the log's fsync (WAL_FSYNC, default on: the
// product's default) and the steam event is pushed when the batch applies.
//
//   STEAM_BENCH_SIZE=small|medium|large (default large), STEAM_BENCH_SAMPLES (default 500),
//   STEAM_BENCH_BATCH (default 100), STEAM_BENCH_FSYNC=0|1 (default 1)
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import { americanToDecimal, decimalToAmerican, type BoardSize } from '../engine/model.ts';
import { NO_PRICE } from '../engine/oddsStore.ts';
import { mulberry32 } from '../engine/random.ts';
import { startApp } from '../service/app.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const TOKEN = 'steam-bench-token';
const SHARP = new Set(['pinnacle', 'circa', 'bookmaker']);

type Measurements = Record<string, number | string>;

/** The SSE stream of steam moves: calls `onMove` with each move's odds id as its event arrives. */
function openSteamStream(port: number, onMove: (oddsId: string) => void): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/stream/signals?topic=steam', agent: false }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`signal stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /"oddsId":"([^"]+)"/.exec(block)?.[1];
          if (block.includes('event: steam') && id !== undefined) onMove(id);
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

const percentile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const round = (value: number, digits = 3): number => Math.round(value * 10 ** digits) / 10 ** digits;

export async function benchTickToSteam(): Promise<Measurements> {
  const size = (process.env.STEAM_BENCH_SIZE ?? process.env.SIGNALS_BENCH_SIZE ?? 'large') as BoardSize;
  const samples = Number(process.env.STEAM_BENCH_SAMPLES ?? 500);
  const batchSize = Math.max(1, Number(process.env.STEAM_BENCH_BATCH ?? 100));
  const fsync = process.env.STEAM_BENCH_FSYNC ?? '1';
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
  const out: Measurements = { 'steam latency board': size, 'steam latency: batch / samples / WAL_FSYNC': `${batchSize} / ${samples} / ${fsync}` };
  let stream: { close(): void } | null = null;
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
    let waiting: { id: string; resolve: (at: number) => void } | null = null;
    stream = await openSteamStream(app.port, (id) => {
      if (waiting !== null && waiting.id === id) {
        const w = waiting;
        waiting = null;
        w.resolve(performance.now());
      }
    });
    const latencies: number[] = [];
    const acks: number[] = [];
    let missed = 0;
    for (let i = 0; i < samples; i++) {
      const lines: string[] = [];
      for (let j = 0; j < batchSize - 1; j++) {
        const slot = ordinary[Math.floor(rand() * ordinary.length)]!;
        lines.push(JSON.stringify({ op: 'price', id: s.idOf(slot), priceAmerican: decimalToAmerican(americanToDecimal(loaded[slot]) * (1 + (rand() - 0.5) * 0.02)) }));
      }
      const slot = sharp[Math.floor(rand() * sharp.length)]!;
      const id = s.idOf(slot);
      const implied = 1 / americanToDecimal(s.priceAmerican[slot]);
      lines.push(JSON.stringify({ op: 'price', id, priceAmerican: decimalToAmerican(1 / Math.min(0.97, implied + 0.03)) }));
      const body = `${lines.join('\n')}\n`;
      clock.advance(61_000); // past the window: the move starts from the row's previous price
      const arrived = new Promise<number>((resolve) => (waiting = { id, resolve }));
      const start = performance.now();
      const status = await post(ingestPort, body);
      const acked = performance.now();
      if (status !== 200) throw new Error(`ingest answered ${status}`);
      const at = await Promise.race([arrived, new Promise<number>((resolve) => setTimeout(() => resolve(NaN), 2000))]);
      waiting = null;
      acks.push(acked - start);
      if (Number.isNaN(at)) missed++;
      else latencies.push(at - start);
    }
    latencies.sort((a, b) => a - b);
    acks.sort((a, b) => a - b);
    out['tick to steam SSE event (ingest POST -> event), p50 ms'] = round(percentile(latencies, 0.5));
    out['tick to steam SSE event (ingest POST -> event), p99 ms'] = round(percentile(latencies, 0.99));
    out['tick to steam SSE event, max ms'] = round(latencies[latencies.length - 1] ?? NaN);
    out['ingest acknowledgement of the same batches, p50 / p99 ms'] = `${round(percentile(acks, 0.5))} / ${round(percentile(acks, 0.99))}`;
    out['steam samples / without an event in 2 s'] = `${latencies.length} / ${missed}`;
  } finally {
    stream?.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await benchTickToSteam();
  for (const [key, value] of Object.entries(results)) console.log(key.padEnd(64), value);
  process.exit(0);
}
