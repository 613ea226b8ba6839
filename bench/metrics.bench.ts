// What recording HTTP metrics costs on the hot read path: the app's routes served by two
// listeners in one process, one with the metrics observer (http/metrics.ts) and one
// without, measured interleaved (off, on, off, on, off) with wrk on an odds page and on
// the 304 path of an event read, so the machine's drift falls on both alike. Both
// listeners write X-Request-Id; only the recording differs. The target: "on" within 3%
// of "off" in requests/s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { Registry } from 'prom-client';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { HttpMetrics } from '../http/metrics.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { startApp } from '../service/app.ts';
import { startProgress } from '../service/progress.ts';
import { runWrk, type WrkResult } from './http-baseline.bench.ts';
import { eventWithRows } from './scenarios/odds.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const ROUNDS = 2;

function etagOf(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.headers.etag ?? '')));
      })
      .on('error', reject);
  });
}

export async function benchMetrics(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const out: Record<string, number | string> = { board: size, 'seconds per run': SECONDS, rounds: ROUNDS };
  const dir = mkdtempSync(join(tmpdir(), 'odds-bench-metrics-'));
  const app = await startApp({ clock: new ManualClock(NOW), board: { size, seed: 42, now: NOW }, dbPath: join(dir, 'odds.db'), env: {}, progress: true, log: (line) => process.stderr.write(`${line}\n`) });
  const routes = app.server.router.routes.map((route) => route.def);
  const servers: RunningServer[] = [];
  try {
    const off = await createServer({ routes, openapi: false, clock: app.engine.clock, port: 0 });
    const on = await createServer({ routes, openapi: false, clock: app.engine.clock, port: 0, observer: new HttpMetrics(new Registry()) });
    servers.push(off, on);
    const event = eventWithRows(app, 300);
    const eventPath = `/api/v1/odds?event_id=${encodeURIComponent(event.id)}&limit=1000`;
    const cases = [
      { name: 'odds league=nba limit=100', path: '/api/v1/odds?league=nba&limit=100', headers: {} as Record<string, string> },
      { name: `odds event_id 304 (${event.rows} rows)`, path: eventPath, headers: { 'If-None-Match': await etagOf(off.port, eventPath) } },
    ];
    const bar = startProgress('metrics bench', cases.length * (2 * ROUNDS + 1), { unit: 'runs' });
    let runs = 0;
    for (const c of cases) {
      const measure = async (server: RunningServer): Promise<number> => {
        await runWrk(`http://127.0.0.1:${server.port}${c.path}`, { seconds: 1, headers: c.headers });
        const result: WrkResult = await runWrk(`http://127.0.0.1:${server.port}${c.path}`, { seconds: SECONDS, headers: c.headers });
        if (result.errors > 0) throw new Error(`${c.name}: ${result.errors} errors`);
        bar.update(++runs);
        return result.requestsPerSec;
      };
      const offs = [await measure(off)];
      const ons: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        ons.push(await measure(on));
        offs.push(await measure(off));
      }
      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      out[`${c.name}: metrics off req/s (mean of ${offs.length})`] = Math.round(mean(offs));
      out[`${c.name}: metrics on req/s (mean of ${ons.length})`] = Math.round(mean(ons));
      out[`${c.name}: on / off`] = Number((mean(ons) / mean(offs)).toFixed(3));
      bar.phase(`${c.name}: on / off ${(mean(ons) / mean(offs)).toFixed(3)}`);
    }
    bar.finish();
  } finally {
    for (const server of servers) await server.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
