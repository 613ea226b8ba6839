// `npm test` after the typecheck: every test file once, then every file that talks
// HTTP once more on the other transport, so each run proves both transports.
//
//   pass 1: all files, TRANSPORT=uws when a native uWebSockets.js binary loads here,
//           else TRANSPORT=node (and the uWS pass is reported as not possible here);
//   pass 2: the HTTP-talking files with TRANSPORT=node.
//
// A file talks HTTP when it imports a helper or module that starts the server (found
// from its imports, so a new test file is covered without a list to maintain).
// Extra arguments narrow the files: `node --import tsx test/run.ts test/http/*.test.ts`.
import { spawnSync } from 'node:child_process';
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

function runPass(label: string, transport: TransportKind, files: readonly string[]): boolean {
  process.stdout.write(`\n=== ${label}: ${files.length} test files on TRANSPORT=${transport} ===\n`);
  const started = Date.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], {
    stdio: 'inherit',
    env: { ...process.env, TRANSPORT: transport },
  });
  const ok = result.status === 0;
  process.stdout.write(`=== ${label} on TRANSPORT=${transport}: ${ok ? 'passed' : `FAILED (exit ${result.status ?? result.signal})`} in ${((Date.now() - started) / 1000).toFixed(0)}s ===\n`);
  return ok;
}

const requested = process.argv.slice(2);
const files = requested.length > 0 ? requested : testFiles();
const httpFiles = files.filter((file) => STARTS_A_SERVER.test(readFileSync(file, 'utf8')));
const uws = loadUws();

let ok: boolean;
if (uws.ok) {
  process.stdout.write(`transports: ${uws.description} (${uws.source}) and node:http\n`);
  ok = runPass('pass 1 (all tests)', 'uws', files);
  ok = runPass(`pass 2 (HTTP tests again on node:http)`, 'node', httpFiles) && ok;
} else {
  process.stdout.write(`transports: node:http only; the uWebSockets.js pass cannot run here: ${uws.summary}\n  ${uws.attempts.join('\n  ')}\n`);
  ok = runPass('all tests', 'node', files);
}
process.exit(ok ? 0 : 1);
