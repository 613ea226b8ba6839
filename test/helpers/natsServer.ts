// A real nats-server for the replica tests: JetStream on, its store in a temp directory,
// listening on a port picked free just before the start (the Debian package `nats-server`;
// .ci/run installs it when missing, so these tests never skip). stop() ends it with
// SIGTERM, kill() with SIGKILL (a machine lost), restart() starts it again on the same
// port and store, so what JetStream had acknowledged must still be there.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.ts';

export interface NatsTestServer {
  readonly port: number;
  readonly url: string;
  readonly storeDir: string;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port and store (after stop or kill). */
  restart(): Promise<void>;
  /** Stops it and deletes its store. */
  dispose(): Promise<void>;
}

/** The nats-server binary, or an error that says how to get one. */
export function natsServerBinary(): string {
  const found = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') throw new Error('nats-server is not installed (apt-get install nats-server; .ci/run does it)');
  return path;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startNatsServer(): Promise<NatsTestServer> {
  const binary = natsServerBinary();
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-js-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  let output = '';

  const launch = async () => {
    output = '';
    const started = spawn(binary, ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child = started;
    let exited = false;
    started.once('exit', () => (exited = true));
    // the port accepts once the server listens; JetStream is ready by then (it starts first)
    const up = await eventually(async () => exited || (await accepts(port)), 20_000, 25);
    if (!up || exited) throw new Error(`nats-server did not start on port ${port}:\n${output}`);
  };
  const end = async (signal: NodeJS.Signals) => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill(signal);
    });
  };

  await launch();
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    async restart() {
      await end('SIGTERM');
      await launch();
    },
    async dispose() {
      await end('SIGTERM');
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
