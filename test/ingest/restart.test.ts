// Restarts of the real service (tsx service/main.ts as a child process on a temp
// DATA_DIR, BOARD=small, a frozen clock) fed over the real ingest listener:
// - a clean stop (SIGTERM) and start: the restored board serves
//   /snapshot?include_history=true byte for byte as before, /edges and /arbitrage equal;
// - SIGKILL at a random moment while a client ingests over HTTP at full speed (4 batches
//   in flight, checkpoints happening): every acknowledged batch is on the board at the
//   place its acknowledged seq says, with its prices, and no batch is half applied;
// - a torn record at the end of the log is cut and reported on the ready line;
// - a damaged record before the end stops the start naming the file and offset, and
//   `npm run repair` then makes it startable.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { FRAME_HEADER_BYTES, listSegments, SEGMENT_HEADER_BYTES } from '../../persistence/log/segments.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { httpRequest } from '../helpers/server.ts';
import { batchOf, crashPrice, crashRows, CRASH_ROWS } from './crashRows.ts';
import { msgpack, ndjson, postBatch } from './ingest-client.ts';
import { openBoard, tempDataDir } from './ingest-helpers.ts';
import { startServiceChild, type ServiceChild } from '../../fixtures/harness/service-child.ts';

const board = testBoard('small');
const SERVED = ['/api/v1/snapshot?include_history=true', '/api/v1/edges?limit=500', '/api/v1/arbitrage?limit=500', '/api/v1/odds/updated?since=0&limit=1000', '/api/v1/status'];

/** The ids crash batches set, found on the fixture board as the service loads it (slot order is load order). */
function crashIds(): string[] {
  const engine = new OddsEngine(new ManualClock(NOW));
  loadBoard(engine, board);
  return crashRows(engine);
}

const token = (dir: string) => readFileSync(join(dir, 'ingest-token'), 'utf8').trim();

/**
 * Every SERVED body once the board is at `seq`. A snapshot poll answers with the newest
 * complete version at once while the next is built in the background, so the snapshot
 * is asked again until its X-Board-Seq says it reflects `seq`.
 */
async function served(child: ServiceChild, seq: number): Promise<Buffer[]> {
  const bodies: Buffer[] = [];
  for (const path of SERVED) {
    let reply = await httpRequest(child.port, path);
    if (path.startsWith('/api/v1/snapshot')) {
      const reached = await eventually(async () => {
        reply = await httpRequest(child.port, path);
        return reply.headers['x-board-seq'] === String(seq);
      }, 20_000);
      assert.ok(reached, `${path} still at X-Board-Seq ${String(reply.headers['x-board-seq'])}, not ${seq}`);
    }
    assert.equal(reply.status, 200, path);
    bodies.push(reply.body);
  }
  return bodies;
}

describe('restarts of the service process', () => {
  const ids = crashIds();

  it('a clean stop and start serves the same snapshot bytes, edges and arbitrage; a torn tail is then cut and reported', async () => {
    const dir = tempDataDir('restart-clean-');
    try {
      let child = await startServiceChild(dir);
      assert.match(child.readyLine, /fixture board loaded into .* and checkpointed/);
      assert.match(child.readyLine, /token generated into .*ingest-token/);
      const secret = token(dir);
      assert.ok(!child.stdout().includes(secret) && !child.stderr().includes(secret), 'the token is never logged');
      let seq = child.seq;
      for (let n = 1; n <= 30; n++) {
        const changes = ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) }));
        const reply = n % 2 === 0 ? await postBatch(child.ingestPort, secret, msgpack(changes), 'application/msgpack') : await postBatch(child.ingestPort, secret, ndjson(changes));
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        seq = reply.body.seq;
      }
      const before = await served(child, seq);
      assert.equal(await child.stop(), 0);

      child = await startServiceChild(dir);
      assert.match(child.readyLine, /restored from .*checkpoint-\d+\.ckpt \+ 0 log record/);
      assert.match(child.readyLine, /token in .*ingest-token/);
      assert.equal(child.seq, seq, 'the restored board is at the last acknowledged seq');
      const after = await served(child, seq);
      SERVED.forEach((path, i) => assert.ok(after[i]!.equals(before[i]!), `${path} differs after the restart`));
      // a batch after the restart is logged, then killed: the log holds it past the checkpoint
      const more = ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(31, r) }));
      const moreReply = await postBatch(child.ingestPort, secret, ndjson(more));
      assert.equal(moreReply.status, 200);
      seq = moreReply.body.seq;
      const withMore = await served(child, seq);
      await child.kill();

      // a crash in the middle of a write leaves a partial frame at the end
      const segments = listSegments(join(dir, 'wal'));
      const last = segments[segments.length - 1]!;
      const torn = Buffer.alloc(40);
      torn.writeUInt32LE(5000, 0); // says 5000 payload bytes; 24 follow
      appendFileSync(last.path, torn);
      child = await startServiceChild(dir);
      assert.match(child.readyLine, /restored from .* \+ 1 log record/);
      assert.match(child.readyLine, new RegExp(`torn tail cut: 40 bytes of ${last.path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} from offset \\d+`));
      assert.equal(child.seq, seq);
      const afterTorn = await served(child, seq);
      SERVED.forEach((path, i) => assert.ok(afterTorn[i]!.equals(withMore[i]!), `${path} differs after cutting the torn tail`));
      assert.equal(await child.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGKILL at a random moment while a client ingests over HTTP at full speed: every acknowledged batch is there with its prices, none half applied', async () => {
    const dir = tempDataDir('restart-kill-');
    try {
      for (let round = 0; round < 2; round++) {
        // round 1 restarts on round 0's DATA_DIR (a restored board) and goes on numbering batches
        const child = await startServiceChild(dir, { CHECKPOINT_LOG_BYTES: String(128 * 1024) });
        const baseSeq = child.seq;
        const secret = token(dir);
        const acks = new Map<number, number>();
        const firstBatch = round * 100_000 + 1;
        let next = firstBatch;
        const killAfter = 100 + Math.floor(Math.random() * 600);
        let killed = false;
        const client = async (): Promise<void> => {
          while (!killed) {
            const n = next++;
            const body = msgpack(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
            let reply;
            try {
              reply = await postBatch(child.ingestPort, secret, body, 'application/msgpack');
            } catch {
              return; // the connection died with the process: not acknowledged
            }
            if (reply.status !== 200) throw new Error(`batch ${n}: ${reply.status} ${JSON.stringify(reply.body)}`);
            acks.set(n, reply.body.seq);
            if (acks.size >= killAfter && !killed) {
              killed = true;
              await child.kill();
            }
          }
        };
        await Promise.all([client(), client(), client(), client()]);
        assert.ok(acks.size >= killAfter);

        const opened = await openBoard(dir, new ManualClock(NOW), board);
        try {
          const engine = opened.durable.engine;
          // each batch moves every crash row once: the seq after a batch says its place in the apply order
          const applied = (engine.seq - baseSeq) / CRASH_ROWS;
          assert.ok(Number.isInteger(applied), `seq ${engine.seq} is not base ${baseSeq} plus whole batches`);
          const histories = ids.map((id, r) => [...engine.history(engine.slotOf(id))].map((e) => batchOf(e.pa!, r)));
          const window = Math.min(histories[0]!.length, applied);
          const orders = histories.map((h) => h.slice(h.length - window));
          for (let r = 1; r < CRASH_ROWS; r++) assert.deepEqual(orders[r], orders[0], `row ${r} saw other batches than row 0 (a batch half applied)`);
          assert.equal(engine.store.priceAmerican[engine.slotOf(ids[0]!)], crashPrice(orders[0]![window - 1]!, 0));
          let checked = 0;
          for (const [n, seq] of acks) {
            const place = (seq - baseSeq) / CRASH_ROWS; // 1 = the first batch this run applied
            assert.ok(place >= 1 && place <= applied, `acknowledged batch ${n} (seq ${seq}) is not on the board (${applied} batches applied)`);
            const fromEnd = applied - place;
            if (fromEnd >= window) continue; // older than the history rings keep
            assert.equal(orders[0]![window - 1 - fromEnd], n, `the batch applied at seq ${seq} is not ${n}`);
            checked++;
          }
          assert.ok(checked > 0);
          assert.ok(opened.durable.engine.seq >= Math.max(...acks.values()));
        } finally {
          await opened.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a damaged record before the end of the log stops the start naming file and offset; npm run repair makes it startable', async () => {
    const dir = tempDataDir('restart-damaged-');
    try {
      let child = await startServiceChild(dir);
      const secret = token(dir);
      for (let n = 1; n <= 5; n++) {
        const reply = await postBatch(child.ingestPort, secret, ndjson(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) }))));
        assert.equal(reply.status, 200);
      }
      await child.kill(); // no last checkpoint: the five records are in the log after it
      const segments = listSegments(join(dir, 'wal'));
      const last = segments[segments.length - 1]!;
      const bytes = readFileSync(last.path);
      // the last record's start: walk the frames after the segment header (u32 length at each frame's start)
      const offsets: number[] = [];
      for (let at = SEGMENT_HEADER_BYTES; at < bytes.length; at += FRAME_HEADER_BYTES + bytes.readUInt32LE(at)) offsets.push(at);
      assert.ok(offsets.length >= 2);
      const victim = offsets[offsets.length - 2]!; // not the last: damage, not a torn tail
      bytes[victim + 20] ^= 0xff;
      writeFileSync(last.path, bytes);

      await assert.rejects(startServiceChild(dir), (error: Error) => {
        assert.ok(error.message.includes(last.path), error.message);
        assert.match(error.message, new RegExp(`at offset ${victim}`));
        assert.match(error.message, /npm run repair/);
        return true;
      });
      // the damaged record and the one after it are in no checkpoint: repair drops them
      // only when told which record the loss starts at
      const refused = spawnSync('npm', ['run', '--silent', 'repair', '--', dir], { encoding: 'utf8' });
      assert.equal(refused.status, 1, refused.stdout + refused.stderr);
      const named = /--drop-from-record=(\d+)/.exec(refused.stdout);
      assert.ok(named !== null, refused.stdout);
      assert.ok(listSegments(join(dir, 'wal')).length === segments.length && readFileSync(last.path).equals(bytes), 'nothing was changed without the flag');
      const repair = spawnSync('npm', ['run', '--silent', 'repair', '--', dir, `--drop-from-record=${named[1]}`], { encoding: 'utf8' });
      assert.equal(repair.status, 0, repair.stdout + repair.stderr);
      assert.match(repair.stdout, new RegExp(`cut ${last.path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} at offset ${victim}`));
      assert.match(repair.stdout, /LOST/);

      child = await startServiceChild(dir);
      assert.match(child.readyLine, /restored from /);
      const status = JSON.parse((await httpRequest(child.port, '/api/v1/status')).body.toString('utf8'));
      assert.ok(status !== null);
      // the records before the damaged one are on the board: batch 3 of 5 (the 4th was damaged, the 5th dropped after it)
      const row = await httpRequest(child.port, `/api/v1/odds?event_id=${encodeURIComponent(ids[0]!.split(':')[0]!)}&limit=1000`);
      const odds = JSON.parse(row.body.toString('utf8')).data as { id: string; priceAmerican: number }[];
      const first = odds.find((o) => o.id === ids[0]);
      assert.equal(first?.priceAmerican, crashPrice(offsets.length - 2, 0));
      assert.equal(await child.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
