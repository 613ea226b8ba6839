// NATS_URL with credentials (nats://user:password@host): the service connects with them
// to a nats-server that requires them, and never writes the password: every log line
// and the ready line show nats://user:***@host; a start that fails (the server refuses
// a wrong password, or there is no server) says so on stderr without it either.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { natsConnectOptions, redactCredentials } from '../../persistence/nats/natsUrl.ts';
import { childEnv } from '../../fixtures/harness/service-child.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { freePort, natsServerBinary } from '../../fixtures/harness/natsServer.ts';
import { httpRequest } from '../helpers/server.ts';
import { startNode } from './fleet-helpers.ts';
import { tempDir } from './replica-helpers.ts';

const USER = 'odds-writer';
const PASSWORD = 'pw-Zq7x-not-to-be-logged';

/** Runs the service until it exits; its exit code and everything it wrote. */
function runToExit(dataDir: string, extra: Record<string, string>): Promise<{ code: number | string; output: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts'], { env: childEnv(dataDir, { LOG: 'nats', ...extra }), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code: signal ?? code ?? -1, output })));
}

describe('NATS_URL with credentials', { timeout: 120_000 }, () => {
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-auth-'));
  const dirs = [tempDir('credentials-writer-'), tempDir('credentials-bad-'), tempDir('credentials-none-')];
  let server: ChildProcess;
  let port = 0;

  before(async () => {
    port = await freePort();
    server = spawn(natsServerBinary(), ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(port), '--user', USER, '--pass', PASSWORD], { stdio: 'ignore' });
    const up = await eventually(async () => (await runToExit(dirs[2]!, { NATS_URL: `nats://127.0.0.1:${port}`, BOARD: 'none' })).output.includes('Authorization'), 20_000, 200);
    assert.ok(up, 'nats-server never answered (with an authorization error for a client without credentials)');
  });
  after(() => {
    server?.kill('SIGKILL');
    rmSync(storeDir, { recursive: true, force: true });
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('redacts the password of any URL in a line, keeping the user', () => {
    assert.equal(redactCredentials('{"natsUrl":"nats://u:p4ss@h:4222"} and tls://tok3n@h2'), '{"natsUrl":"nats://u:***@h:4222"} and tls://***@h2');
    assert.equal(redactCredentials('nats://127.0.0.1:4222 has none'), 'nats://127.0.0.1:4222 has none');
    // and the client gets them as options, %-decoded
    assert.deepEqual(natsConnectOptions('nats://u%40x:p%3Ass@h:4222'), { servers: 'nats://h:4222', user: 'u@x', pass: 'p:ss' });
    assert.deepEqual(natsConnectOptions('tls://tok@h'), { servers: 'tls://h', token: 'tok' });
    assert.deepEqual(natsConnectOptions('nats://h:4222'), { servers: 'nats://h:4222' });
  });

  it('connects with them and writes the password nowhere', async () => {
    const url = `nats://${USER}:${PASSWORD}@127.0.0.1:${port}`;
    const writer = await startNode(url, dirs[0]!, 'writer', 'w');
    try {
      const redacted = `nats://${USER}:***@127.0.0.1:${port}`;
      assert.ok(writer.readyLine.includes(`writer on ${redacted} stream ODDS`), writer.readyLine);
      assert.ok(writer.stdout().includes(`"natsUrl":"${redacted}"`), 'the start line lists the setting, redacted');
      assert.equal((await httpRequest(writer.port, '/api/v1/status')).status, 200);
    } finally {
      await writer.stop();
    }
    assert.ok(!writer.stdout().includes(PASSWORD) && !writer.stderr().includes(PASSWORD), `the password was written:\n${writer.stdout()}${writer.stderr()}`);
  });

  it('a start that fails says why without the password', async () => {
    const refused = await runToExit(dirs[1]!, { NATS_URL: `nats://${USER}:wrong-${PASSWORD}@127.0.0.1:${port}` });
    assert.notEqual(refused.code, 0);
    assert.match(refused.output, /failed to start/);
    assert.ok(!refused.output.includes(PASSWORD), refused.output);
    const nobody = await runToExit(dirs[1]!, { NATS_URL: `nats://${USER}:${PASSWORD}@127.0.0.1:${await freePort()}` });
    assert.notEqual(nobody.code, 0);
    assert.ok(!nobody.output.includes(PASSWORD), nobody.output);
    const badSetting = await runToExit(dirs[1]!, { NATS_URL: `http://${USER}:${PASSWORD}@127.0.0.1:${port}` });
    assert.equal(badSetting.code, 2);
    assert.match(badSetting.output, /NATS_URL=.*odds-writer:\*\*\*@/);
    assert.ok(!badSetting.output.includes(PASSWORD), badSetting.output);
  });
});
