// The service as a child process (tsx service/main.ts) on a DATA_DIR, for the restart
// tests: started with BOARD=small at the tests' NOW (a frozen clock), ephemeral public
// and ingest ports read back from its ready line.
import { spawn, type ChildProcess } from 'node:child_process';
import { NOW } from '../helpers/now.ts';

export interface ServiceChild {
  proc: ChildProcess;
  readyLine: string;
  port: number;
  ingestPort: number;
  /** Board seq on the ready line. */
  seq: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code, or the signal name. */
  exited: Promise<number | string>;
  /** SIGTERM and wait for the exit (a clean stop: last checkpoint). */
  stop(): Promise<number | string>;
  kill(): Promise<number | string>;
}

export function childEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, BOARD: 'small', NOW: new Date(NOW).toISOString(), PORT: '0', HOST: '127.0.0.1', INGEST_PORT: '0', DATA_DIR: dataDir, SIM_RATE: '0', ...extra };
  for (const name of ['DB_PATH', 'INGEST_TOKEN', 'WAL_FSYNC', 'REQUIRE_KEY', 'CHECKPOINT_INTERVAL_MS', 'CHECKPOINT_LOG_BYTES']) if (!(name in extra)) delete env[name];
  return env;
}

/** Starts the service; resolves once it printed its ready line, rejects if it exits first (with what it said). */
export function startServiceChild(dataDir: string, extra: Record<string, string> = {}): Promise<ServiceChild> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts'], { env: childEnv(dataDir, extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(signal ?? code ?? -1)));
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.includes(' ready in '));
      if (line === undefined || !out.includes('\n')) return;
      const port = /live board http:\/\/[^:]+:(\d+)\//.exec(line);
      const ingest = /ingest on http:\/\/[^:]+:(\d+)\//.exec(line);
      const seq = /board seq (\d+)/.exec(line);
      if (port === null || ingest === null || seq === null) return reject(new Error(`unexpected ready line: ${line}`));
      resolve({
        proc,
        readyLine: line,
        port: Number(port[1]),
        ingestPort: Number(ingest[1]),
        seq: Number(seq[1]),
        stdout: () => out,
        stderr: () => err,
        exited,
        stop() {
          proc.kill('SIGTERM');
          return exited;
        },
        kill() {
          proc.kill('SIGKILL');
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before it was ready:\n${err}${out}`)));
  });
}
