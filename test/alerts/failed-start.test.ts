// A start that fails after the webhook delivery thread started (here: a directory where
// the ingest address file goes, so opening the ingest port to batches fails) closes what
// it had opened: the same data dir starts again at once, and the process exits by itself
// (a delivery thread, listener or timer left running would keep it alive).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { INGEST_ADDRESS_FILE } from '../../ingest/ingestAddress.ts';

test('a start failing after the delivery thread started leaves nothing running: the process exits and the data dir starts again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'alerts-failed-start-'));
  try {
    mkdirSync(join(dataDir, INGEST_ADDRESS_FILE));
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/alerts/failed-start-child.ts', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // generous: two starts of the app on a loaded machine; a process kept alive never exits
    const deadline = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const code = await exited;
    clearTimeout(deadline);
    // the child's own lines (the app's log lines, such as snapshot_built, share its stdout)
    const OWN = ['refused', 'started', 'restarted', 'stillOpen'];
    const lines = out
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => OWN.some((key) => key in l));
    assert.equal(code, 0, `the child did not exit by itself (code ${code}): ${out} ${err.slice(-2000)}`);
    assert.match(String(lines[0]?.refused), /EISDIR/, `the start was refused for the directory: ${out}`);
    // a stillOpen line (printed if the process lived 5 s past its last close) only says what held it up
    assert.deepEqual(lines.slice(1).filter((l) => !('stillOpen' in l)), [{ restarted: true }], `the data dir started again: ${out}`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
