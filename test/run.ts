// `npm test` after the typecheck: every test file once, then every file that talks HTTP
// once more on the other transport, so each run proves both transports.
//
//   uWS jobs:       all files, TRANSPORT=uws when a native uWebSockets.js binary loads
//                   here, else TRANSPORT=node (and the uWS pass is reported as not possible);
//   node:http jobs: the HTTP-talking files again with TRANSPORT=node.
//
// A file talks HTTP when it imports a helper or module that starts the server (found from
// its imports, so a new test file is covered without a list to maintain).
//
// The jobs run as one queue, TEST_CONCURRENCY files at a time (default: one per core, at
// least 2 — most files spend their time waiting on servers, child processes and sockets,
// so two at a time halves the wall time on this 2-core machine where one at a time took
// 28 minutes). Each file runs in its own process (node's test runner without --test: the
// file's TAP goes to stdout, its exit code says pass or fail); its output is printed whole
// when it ends, so files never interleave. A file that runs past TEST_FILE_TIMEOUT_S
// (default 600) is killed and counted as failed. The summary lists failures and the
// slowest files.
//
// Extra arguments narrow the files: `node --import tsx test/run.ts test/http/*.test.ts`.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadUws } from '../http/transport/loadUws.ts';
import type { TransportKind } from '../http/transport/transport.ts';

const STARTS_A_SERVER = /from '[./]*\/(?:helpers\/(?:server|app)|http\/(?:server|app)|service\/app)\.ts'|(?:http|service)\/main\.ts/;

function testFiles(): string[] {
  const files: string[] = [];
  for (const area of readdirSync('test', { withFileTypes: true })) {
    if (!area.isDirectory() || area.name === 'helpers') continue;
    for (const name of readdirSync(join('test', area.name)).sort()) {
      if (name.endsWith('.test.ts')) files.push(join('test', area.name, name));
    }
  }
  return files.sort();
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`${name}=${JSON.stringify(raw)} is not allowed (a whole number of at least 1)\n`);
    process.exit(2);
  }
  return value;
}

interface Job {
  file: string;
  transport: TransportKind;
}

interface JobResult extends Job {
  ok: boolean;
  seconds: number;
  tests: number;
  failed: number;
  note: string;
}

const FILE_TIMEOUT_S = positiveInteger('TEST_FILE_TIMEOUT_S', 600);
const CONCURRENCY = positiveInteger('TEST_CONCURRENCY', Math.max(2, availableParallelism()));

function runJob(job: Job): Promise<JobResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', job.file], {
      env: { ...process.env, TRANSPORT: job.transport },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    running.add(child.pid!);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    let note = '';
    const timer = setTimeout(() => {
      note = `killed after ${FILE_TIMEOUT_S} s`;
      try {
        // the file's own process group: servers and tools it started go with it
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, FILE_TIMEOUT_S * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child.pid!);
      const output = Buffer.concat(chunks).toString();
      // the totals' lines: '# tests 8' (Node 20's TAP reporter) or 'ℹ tests 8' (Node 24's spec reporter)
      const count = (label: string): number => Number(new RegExp(`^(?:#|\u2139) ${label} (\\d+)$`, 'm').exec(output)?.[1] ?? 0);
      const seconds = (Date.now() - started) / 1000;
      const ok = code === 0 && note === '';
      if (!ok && note === '') note = signal !== null ? `ended by ${signal}` : `exit ${code}`;
      process.stdout.write(`\n### ${job.file} on TRANSPORT=${job.transport}: ${ok ? 'passed' : `FAILED (${note})`} in ${seconds.toFixed(1)} s\n${output}`);
      resolve({ ...job, ok, seconds, tests: count('tests'), failed: count('fail'), note });
    });
  });
}

/** Process groups of the files running now: stopped with the runner (Ctrl-C, a CI timeout). */
const running = new Set<number>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const pid of running) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // ended already
      }
    }
    process.exit(130);
  });
}

async function runQueue(jobs: readonly Job[]): Promise<JobResult[]> {
  const results: JobResult[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      results.push(await runJob(job));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, worker));
  return results;
}

const requested = process.argv.slice(2);
const files = requested.length > 0 ? requested : testFiles();
const httpFiles = files.filter((file) => STARTS_A_SERVER.test(readFileSync(file, 'utf8')));
const uws = loadUws();

const jobs: Job[] = [];
if (uws.ok) {
  process.stdout.write(`transports: ${uws.description} (${uws.source}) and node:http\n`);
  for (const file of files) jobs.push({ file, transport: 'uws' });
  for (const file of httpFiles) jobs.push({ file, transport: 'node' });
} else {
  process.stdout.write(`transports: node:http only; the uWebSockets.js pass cannot run here: ${uws.summary}\n  ${uws.attempts.join('\n  ')}\n`);
  for (const file of files) jobs.push({ file, transport: 'node' });
}
process.stdout.write(`${jobs.length} test file runs (${files.length} files, ${uws.ok ? `${httpFiles.length} again on node:http` : 'node:http only'}), ${CONCURRENCY} at a time\n`);

const started = Date.now();
const results = await runQueue(jobs);
const failed = results.filter((r) => !r.ok);
const tests = results.reduce((sum, r) => sum + r.tests, 0);
process.stdout.write('\n=== summary ===\n');
process.stdout.write(`${results.length} file runs, ${tests} tests, ${failed.length} failed file runs, ${((Date.now() - started) / 1000).toFixed(0)} s wall\n`);
process.stdout.write('slowest:\n');
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10)) {
  process.stdout.write(`  ${r.seconds.toFixed(1).padStart(6)} s  ${r.file} (${r.transport})\n`);
}
for (const r of failed) process.stdout.write(`FAILED: ${r.file} on TRANSPORT=${r.transport} (${r.note}${r.failed > 0 ? `, ${r.failed} failing tests` : ''})\n`);
process.exit(failed.length === 0 ? 0 : 1);
