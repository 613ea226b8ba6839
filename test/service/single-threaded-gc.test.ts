// The one-core start: with SINGLE_THREADED_GC=auto a service allowed one core (here
// pinned to core 0 by taskset) runs node with --single-threaded-gc, in the same process
// (its pid is the one its starter holds); with two cores, or with the setting off, it
// runs without it. Where node cannot replace its process (before Node 22.15) the start
// says so in a warning and goes on. The start's log line says which it is.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { wantsSingleThreadedGc } from '../../service/singleThreadedGc.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'odds-gc-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const canRelaunch = typeof (process as unknown as { execve?: unknown }).execve === 'function';

interface Started {
  pid: number;
  start: { singleThreadedGc: boolean; pid: number };
  warned: boolean;
}

/** Starts `npm start`'s entry (optionally under taskset), reads its log up to the start line and the next, then kills it. */
function startService(pinToOneCore: boolean, setting: string): Promise<Started> {
  const node = [process.execPath, '--import', 'tsx', 'service/main.ts'];
  const [command, args] = pinToOneCore ? ['taskset', ['-c', '0', ...node]] : [node[0], node.slice(1)];
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', PORT: '0', INGEST_PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(dir, `data-${pinToOneCore}-${setting}`), BOARD: 'small', SIM_RATE: '0', DB_PATH: ':memory:', SINGLE_THREADED_GC: setting },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
      const start = lines.find((line) => line.event === 'start');
      // the line after the start line: the warning if there is one, else whatever comes next
      if (start === undefined || lines.length < lines.indexOf(start) + 2) return;
      child.kill('SIGKILL');
      resolve({ pid: child.pid!, start: start as unknown as Started['start'], warned: lines.some((line) => line.event === 'single_threaded_gc_unavailable') });
    });
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`the service exited (${code ?? signal}) early:\n${err}${out}`));
    });
  });
}

describe('--single-threaded-gc on one core', () => {
  it('is wanted on one core with auto, always with on, never with off', () => {
    assert.equal(wantsSingleThreadedGc('auto', 1), true);
    assert.equal(wantsSingleThreadedGc('auto', 2), false);
    assert.equal(wantsSingleThreadedGc('on', 8), true);
    assert.equal(wantsSingleThreadedGc('off', 1), false);
  });

  it('a service pinned to one core runs with it, in the same process (or warns where node cannot relaunch)', async () => {
    const started = await startService(true, 'auto');
    assert.equal(started.start.pid, started.pid, 'the process its starter holds is the one serving');
    assert.equal(started.start.singleThreadedGc, canRelaunch);
    assert.equal(started.warned, !canRelaunch);
  });

  it('pinned to one core with SINGLE_THREADED_GC=off, it runs without it and says nothing', async () => {
    const started = await startService(true, 'off');
    assert.equal(started.start.singleThreadedGc, false);
    assert.equal(started.warned, false);
  });

  it('on every core the process may use, auto leaves the collector threads on', async () => {
    const started = await startService(false, 'auto');
    assert.equal(started.start.singleThreadedGc, availableParallelism() <= 1 && canRelaunch);
    assert.equal(started.warned, availableParallelism() <= 1 && !canRelaunch);
  });
});
