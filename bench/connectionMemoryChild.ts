// The service for bench/clients.bench.ts's per-connection memory: the real app (small
// board, a still clock, no simulator) in a child process started with --expose-gc, so
// that its own JavaScript heap can be measured after full collections, apart from the
// bench's clients. It prints `port <n>` when listening and answers each IPC message
// 'measure' with its heap after collecting garbage until it stops shrinking.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { ManualClock } from '../engine/clock.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { startApp } from '../service/app.ts';

export interface HeapMeasure {
  /** V8 heap in use (objects alive after collection), bytes. */
  heapUsed: number;
  /** Memory outside the V8 heap held by JavaScript objects (Buffers, ArrayBuffers), bytes. */
  external: number;
  /** Resident set size of the process, for comparison, bytes. */
  rss: number;
  /** The transport serving the connections. */
  transport: string;
}

const NOW = Date.parse('2026-11-21T12:00:00Z');

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('start with --expose-gc');
  const dir = mkdtempSync(join(tmpdir(), 'bench-conn-mem-'));
  const app = await startApp({
    clock: new ManualClock(NOW),
    board: generateBoard({ size: 'small', seed: 42, now: NOW }),
    dbPath: join(dir, 'odds.db'),
    host: '127.0.0.1',
    port: 0,
    ingestPort: 0,
    simulatorRate: 0,
    env: { STREAM_MAX_ANONYMOUS_CONNECTIONS: '100000' },
    log: () => undefined,
  });
  process.on('message', (message) => {
    if (message !== 'measure') return;
    // collect until the heap stops shrinking (weak references and finalizers need more than one pass)
    let used = Infinity;
    for (let i = 0; i < 10; i++) {
      gc();
      const now = v8.getHeapStatistics().used_heap_size;
      if (now >= used) break;
      used = now;
    }
    const memory = process.memoryUsage();
    const reply: HeapMeasure = { heapUsed: v8.getHeapStatistics().used_heap_size, external: memory.external, rss: memory.rss, transport: app.server.transport };
    process.send!(reply);
  });
  process.on('disconnect', () => {
    void app.close().finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  process.stdout.write(`port ${app.port}\n`);
}

void main();
