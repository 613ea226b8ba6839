// The DATA_DIR lock is given back last: a second process may take it the moment it is
// released, so by then the first must have closed every file it holds in DATA_DIR (the
// log, the checkpoints, odds.db, the alert outbox's alerts.db). Watched from outside,
// through the process's open files in /proc/<pid>/fd (Linux): while a real service
// stops on SIGTERM, no look at its files may find lock.db closed and another DATA_DIR
// file still open. And a start that fails half-way (the public port taken) closes what
// it opened in DATA_DIR and gives the lock back, in process, so the next start can run.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, sep } from 'node:path';
import { describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { DataDirLock } from '../../persistence/log/dataDirLock.ts';
import { startApp } from '../../service/app.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';
import { startServiceChild } from '../../fixtures/harness/service-child.ts';

const procFs = existsSync('/proc/self/fd');

/** The files under `dir` that process `pid` holds open now (each name relative to dir); null once its fd table is gone. */
function openFilesIn(pid: number | 'self', dir: string): string[] | null {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  const files: string[] = [];
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith(dir + sep)) files.push(target.slice(dir.length + 1));
    } catch {
      // closed between the listing and the look
    }
  }
  return files.sort();
}

const isLockFile = (name: string) => name === 'lock.db' || name.startsWith('lock.db-');

describe('the DATA_DIR lock is released last', { skip: procFs ? false : 'needs /proc/<pid>/fd (Linux)' }, () => {
  it('SIGTERM: the service closes the log, the checkpoint, odds.db and alerts.db before lock.db', async () => {
    const dir = tempDataDir('lock-order-');
    const real = realpathSync(dir);
    try {
      const child = await startServiceChild(dir, { SHUTDOWN_GRACE_MS: '0' });
      const pid = child.proc.pid!;
      const before = openFilesIn(pid, real) ?? [];
      // the look can see what it is for: the lock and the SQLite file held side by side
      assert.ok(before.includes('lock.db'), `lock.db is not among the open files: ${before.join(', ')}`);
      assert.ok(before.includes('odds.db'), `odds.db is not among the open files: ${before.join(', ')}`);

      child.proc.kill('SIGTERM');
      // looks as fast as they come until the process is gone (this loop holds the event
      // loop, so the child is not reaped meanwhile: its fd table empties and stays empty)
      const seen: string[][] = [];
      let last = '';
      const deadline = Date.now() + 60_000;
      for (;;) {
        const files = openFilesIn(pid, real);
        if (files === null) break;
        const key = files.join(',');
        if (key !== last) {
          seen.push(files);
          last = key;
        }
        if (files.length === 0 && seen.length > 1) break;
        if (Date.now() > deadline) assert.fail(`the service did not stop in 60 s; last open files: ${key}`);
      }
      assert.equal(await child.exited, 0, child.stderr());
      const unlocked = seen.filter((files) => !files.some(isLockFile));
      for (const files of unlocked) assert.deepEqual(files, [], `lock.db was closed while ${files.join(', ')} were still open (every look, in order: ${seen.map((f) => f.join(' ')).join(' | ')})`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a start that fails after the board is open (the public port taken) closes every file in DATA_DIR and gives the lock back', async () => {
    const dir = tempDataDir('lock-failed-start-');
    const real = realpathSync(dir);
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await assert.rejects(
        startApp({ clock: new ManualClock(NOW), board: testBoard('small'), dataDir: dir, ingestPort: 0, host: '127.0.0.1', port, simulatorRate: 0, env: {}, log: () => {} }),
      );
      assert.deepEqual(openFilesIn('self', real), [], 'files in DATA_DIR left open by the failed start');
      // the next start on this DATA_DIR can take the lock
      const lock = DataDirLock.acquire(dir);
      lock.release();
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
