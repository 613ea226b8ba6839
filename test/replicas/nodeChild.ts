// Child process of crash.test.ts, killed with SIGKILL at a random moment.
//
//   replica <nats url> <DATA_DIR> <clock ms>: a replica following the stream, serving
//     its engine with startApp on an ephemeral port ("ready <port> <checkpoint source>"),
//     checkpointing every 20 ms when it moved ("checkpoint <index>"), reporting what it
//     applied ("applied <index> <seq>").
//   writer <nats url> <DATA_DIR> <clock ms>: the writer ingesting random batches at full
//     speed, 4 in flight, one over 1 MiB every 25 (published in parts), printing
//     "ack <index> <seq>" for each acknowledged batch.
import { ManualClock } from '../../engine/clock.ts';
import { startApp } from '../../service/app.ts';
import { testBoard } from '../helpers/app.ts';
import { join } from 'node:path';
import { openReplica, openWriter, randomBatch, seededRandom } from './replica-helpers.ts';

const [role, url, dataDir, now] = process.argv.slice(2) as [string, string, string, string];
const clock = new ManualClock(Number(now));
const board = testBoard('small');
const out = (line: string) => process.stdout.write(`${line}\n`);

if (role === 'replica') {
  const node = await openReplica(url, dataDir, clock, board);
  const app = await startApp({ clock, board, engine: node.replica.engine, dbPath: join(dataDir, 'odds.db'), port: 0, env: {}, log: () => {} });
  out(`ready ${app.port} ${node.replica.restore.source}`);
  let reported = -1;
  let checkpointed = node.replica.appliedIndex;
  setInterval(() => {
    const index = node.replica.appliedIndex;
    if (index !== reported) {
      reported = index;
      out(`applied ${index} ${node.replica.engine.seq}`);
    }
    if (index !== checkpointed) {
      checkpointed = node.replica.checkpointNow().logIndex;
      out(`checkpoint ${checkpointed}`);
    }
  }, 20);
} else if (role === 'writer') {
  const node = await openWriter(url, dataDir, clock, board);
  const random = seededRandom(process.pid);
  const removed = new Set<string>();
  out(`ready ${node.writer.ingest.appliedIndex}`);
  let submitted = 0;
  const lane = async (): Promise<void> => {
    for (;;) {
      const size = ++submitted % 25 === 0 ? 30_000 : 1 + Math.floor(random() * 40);
      const changes = randomBatch(node.writer.engine, random, size, removed).filter((c) => size < 1000 || (c as { op: string }).op === 'price');
      const result = await node.writer.ingest.submit(changes);
      out(`ack ${result.index} ${result.seq}`);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
} else {
  throw new Error(`unknown role ${role}`);
}
