// Child process of archive-crash.property.test.ts: opens DATA_DIR (argv[2]) with the
// tick archive in argv[3], flushing every 20 ms, and ingests at full speed (4 batches
// in flight, checkpoints every 64 KiB of log) until it is killed. Batch n sets each of
// the first CRASH_ROWS pinnacle rows r to crashPrice(n, r) (n from argv[4] on) and
// prints "ack n index" once acknowledged.
import { ManualClock } from '../../engine/clock.ts';
import { attachTickArchive } from '../../ingest/archiveRows.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { openBoard } from '../ingest/ingest-helpers.ts';
import { crashRows, crashPrice } from '../ingest/crashRows.ts';

const [dir, archiveDir, firstBatch] = process.argv.slice(2);
const clock = new ManualClock(NOW);
// no fsync: a SIGKILL keeps what was written (the page cache survives a process), which is what this test kills
const opened = await openBoard(dir!, clock, testBoard('small'), { checkpointLogBytes: 64 * 1024, segmentBytes: 16 * 1024, fsync: false });
await attachTickArchive(opened.durable, { dir: archiveDir!, retentionDays: 30, intervalMs: 20 }, { now: () => clock.now(), warn: (line) => process.stderr.write(`${line}\n`), fsync: false });
const ids = crashRows(opened.durable.engine);
process.stdout.write('ready\n');
let next = Number(firstBatch);
const submitOne = async (): Promise<void> => {
  for (;;) {
    const n = next++;
    clock.advance(1);
    const result = await opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
    process.stdout.write(`ack ${n} ${result.index}\n`);
  }
};
await Promise.all([submitOne(), submitOne(), submitOne(), submitOne()]);
