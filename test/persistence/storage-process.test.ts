// Storage faults met by real processes: a second service on the same DATA_DIR refuses
// to start and names the pid of the first; SIGKILL in the middle of a checkpoint's
// rename (before it, and after it before the directory fsync) loses no acknowledged
// batch; a tmpfs DATA_DIR filled while the SIGTERM checkpoint is written keeps the
// previous checkpoint and the log, and the next start (with room again) restores every
// acknowledged batch. Mounting a tmpfs needs root: without it that test says so and is
// skipped.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { listCheckpoints } from '../../persistence/log/checkpointFiles.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { httpRequest } from '../helpers/server.ts';
import { crashPrice, crashRows } from '../ingest/crashRows.ts';
import { ndjson, postBatch } from '../ingest/ingest-client.ts';
import { openBoard, tempDataDir } from '../ingest/ingest-helpers.ts';
import { startServiceChild } from '../../fixtures/harness/service-child.ts';
import { readFileSync } from 'node:fs';

const token = (dir: string) => readFileSync(join(dir, 'ingest-token'), 'utf8').trim();

describe('storage faults in real processes', () => {
  it('a second service on the same DATA_DIR refuses to start and names the pid holding it; the first goes on', async () => {
    const dir = tempDataDir('lock-');
    try {
      const first = await startServiceChild(dir);
      await assert.rejects(startServiceChild(dir), (error: Error) => {
        assert.match(error.message, new RegExp(`DATA_DIR ${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is in use by process ${first.proc.pid}`));
        return true;
      });
      const ids = JSON.parse((await httpRequest(first.port, '/api/v1/odds?limit=1')).body.toString('utf8')).data as { id: string }[];
      const reply = await postBatch(first.ingestPort, token(dir), ndjson([{ op: 'price', id: ids[0]!.id, priceAmerican: 321 }]));
      assert.equal(reply.status, 200);
      // a kill -9 releases the lock with the process: the next start takes it
      await first.kill();
      const next = await startServiceChild(dir);
      assert.match(next.readyLine, /restored from/);
      assert.equal(await next.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const when of ['before', 'after'] as const) {
    it(`SIGKILL ${when} the rename of a checkpoint: every acknowledged batch is restored`, async () => {
      const dir = tempDataDir(`rename-${when}-`);
      try {
        const child = spawn(process.execPath, ['--import', 'tsx', 'test/persistence/checkpointCrashChild.ts', dir, when], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        const exited = new Promise<string | number>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? -1)));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk.toString();
            if (out.includes('paused\n')) resolve();
          });
          void exited.then(() => reject(new Error(`the child exited before pausing:\n${err}${out}`)));
        });
        child.kill('SIGKILL');
        assert.equal(await exited, 'SIGKILL');
        const acked = out.split('\n').filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
        const last = Math.max(...acked);
        assert.ok(last >= 20, out);
        const names = readdirSync(dir);
        if (when === 'before') assert.ok(names.some((n) => n.endsWith('.ckpt.tmp')), `the new checkpoint is still a temporary file: ${names}`);
        else assert.ok(listCheckpoints(dir).length >= 2, `renamed: ${names}`);
        const clock = new ManualClock(NOW + 1e6);
        const opened = await openBoard(dir, clock, testBoard('small'));
        try {
          // batch n is record n (the fixture is checkpoint 0); a batch made durable but
          // killed before it printed its ack may be there too
          const applied = opened.durable.ingest.appliedIndex;
          assert.ok(applied >= last && applied <= 25, `record ${applied} restored, ${last} acknowledged`);
          const engine = opened.durable.engine;
          const ids = crashRows(engine);
          ids.forEach((id, r) => assert.equal(engine.store.priceAmerican[engine.slotOf(id)], crashPrice(applied, r), `row ${id} holds batch ${applied}'s price`));
        } finally {
          await opened.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('a tmpfs DATA_DIR filled while the SIGTERM checkpoint is written: the previous checkpoint and the log are kept, and the next start restores every acknowledged batch', async (t) => {
    const mount = mkdtempSync(join(tmpdir(), 'tmpfs-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) {
      rmSync(mount, { recursive: true, force: true });
      t.skip(`mounting a tmpfs needs root (mount said: ${(mounted.stderr || mounted.error?.message || '').trim()})`);
      return;
    }
    try {
      const dir = join(mount, 'data');
      mkdirSync(dir);
      let child = await startServiceChild(dir);
      const secret = token(dir);
      const rows = (JSON.parse((await httpRequest(child.port, '/api/v1/odds?limit=200')).body.toString('utf8')).data as { id: string; priceAmerican: number | null }[])
        .filter((r) => r.priceAmerican !== null)
        .slice(0, 40)
        .map((r) => r.id);
      assert.equal(rows.length, 40);
      const price = (n: number, r: number) => 100 + n * 100 + r;
      // fill the file system but for a little room: batches still fit, a checkpoint does not
      const free = statfsSync(mount).bavail * statfsSync(mount).bsize;
      writeFileSync(join(mount, 'filler'), Buffer.alloc(Math.max(0, free - 400 * 1024)));
      let acked = 0;
      for (let n = 1; n <= 200; n++) {
        const reply = await postBatch(child.ingestPort, secret, ndjson(rows.map((id, r) => ({ op: 'price', id, priceAmerican: price(n, r) }))));
        if (reply.status !== 200) {
          assert.equal(reply.status, 503, JSON.stringify(reply.body));
          assert.equal(reply.body.code, 'log_unavailable');
          break;
        }
        acked = n;
      }
      assert.ok(acked >= 5, `${acked} batches acknowledged before the disk was full`);
      const before = listCheckpoints(dir).map((c) => c.path);
      await child.stop();
      assert.match(child.stderr() + child.stdout(), /checkpoint failed/);
      assert.deepEqual(listCheckpoints(dir).map((c) => c.path), before, 'the previous checkpoint is kept, no other appeared');
      assert.ok(!readdirSync(dir).some((n) => n.endsWith('.tmp')), 'the failed temporary file is deleted');
      rmSync(join(mount, 'filler'));
      child = await startServiceChild(dir);
      assert.match(child.readyLine, /restored from/);
      const served = JSON.parse((await httpRequest(child.port, '/api/v1/odds?limit=200')).body.toString('utf8')).data as { id: string; priceAmerican: number }[];
      const byId = new Map(served.map((r) => [r.id, r.priceAmerican]));
      rows.forEach((id, r) => assert.equal(byId.get(id), price(acked, r), `${id} holds the last acknowledged batch's price`));
      assert.equal(await child.stop(), 0);
    } finally {
      spawnSync('umount', [mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
