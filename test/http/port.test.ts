// One process per port: a second server on a port in use fails to start with a message
// that names the port and what to do, on every transport (uWebSockets.js on its own
// sets SO_REUSEPORT, and a second `npm start` used to share the port silently). Sharing
// happens only when REUSE_PORT=1 asks for it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type RunningServer } from '../../http/server.ts';
import { loadUws } from '../../http/transport/loadUws.ts';
import { netReusePortSupported } from '../../http/transport/front.ts';
import { httpRequest } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IN_USE = /port \d+ on 127\.0\.0\.1 is already in use by another process \(EADDRINUSE\)/;

/** A port free right now on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** `npm start` as a separate process; resolves with its exit code and stderr (killed after 60 s). */
function startService(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'odds-port-'));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', BOARD: 'small', NOW: '2026-11-21T12:00:00Z', SIM_RATE: '0', DATA_DIR: dataDir, INGEST_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stderr });
    });
  });
}

describe('one process per port', () => {
  let first: RunningServer;
  before(async () => {
    first = await createServer({ routes: [] });
  });
  after(() => first.close());

  it('a second server on the same port fails with a message naming the port, and the first keeps serving', async () => {
    await assert.rejects(createServer({ routes: [], port: first.port }), IN_USE);
    assert.equal((await httpRequest(first.port, '/api/v1/openapi.json')).status, 200);
  });

  it('a second `npm start` on that PORT exits 1 with the message', async () => {
    const second = await startService({ PORT: String(first.port), TRANSPORT: process.env.TRANSPORT ?? '' });
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, /odds-engine failed to start: port \d+ on 127\.0\.0\.1 is already in use/);
    assert.equal((await httpRequest(first.port, '/api/v1/openapi.json')).status, 200);
  });

  it('REUSE_PORT=1 is refused where node:net cannot share a port (Node before 22.12) and shares a fixed port from 22.12', async () => {
    if (!netReusePortSupported()) {
      await assert.rejects(createServer({ routes: [], reusePort: true }), /REUSE_PORT=1 needs Node 22\.12 or later/);
      return;
    }
    // a port picked by the kernel (port 0) is not shareable on Linux: a fixed one is
    const port = await freePort();
    const a = await createServer({ routes: [], reusePort: true, port });
    try {
      const b = await createServer({ routes: [], reusePort: true, port });
      await b.close();
    } finally {
      await a.close();
    }
  });

  const uws = loadUws();
  describe('uWebSockets.js listening on the port itself (UWS_DIRECT=1)', () => {
    it('is refused at start, saying why, where no uWebSockets.js binary loads', async () => {
      if (uws.ok) await (await createServer({ routes: [], transport: 'uws', uwsDirect: true })).close();
      else await assert.rejects(createServer({ routes: [], transport: 'uws', uwsDirect: true }), /no native uWebSockets\.js binary loads here/);
    });

    it('is exclusive too unless REUSE_PORT=1', async (t) => {
      if (!uws.ok) return t.diagnostic(`no uWebSockets.js binary loads here (${uws.summary}): the test above checked the refusal`);
      const direct = await createServer({ routes: [], transport: 'uws', uwsDirect: true });
      try {
        await assert.rejects(createServer({ routes: [], transport: 'uws', uwsDirect: true, port: direct.port }), IN_USE);
        await assert.rejects(createServer({ routes: [], transport: 'uws', port: direct.port }), IN_USE);
      } finally {
        await direct.close();
      }
      // Sharing is between processes (uSockets refuses a second listen on one port within a process).
      // A port picked by the kernel (port 0) is not shareable on Linux: a fixed one is.
      const shared = await createServer({ routes: [], transport: 'uws', uwsDirect: true, reusePort: true, port: await freePort() });
      try {
        const script = `import { createServer } from './http/server.ts'; const s = await createServer({ routes: [], transport: 'uws', uwsDirect: true, reusePort: true, port: ${shared.port} }); console.log('listening'); await s.close();`;
        const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
        assert.equal(child.status, 0, child.stderr);
        assert.match(child.stdout, /listening/);
      } finally {
        await shared.close();
      }
    });
  });
});
