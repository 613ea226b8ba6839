// Child process of crash.test.ts: opens DATA_DIR (argv[2]) and ingests at full speed
// through Ingest, 4 batches in flight, until it is killed. Batch n sets each of the
// first ROWS pinnacle rows r to price(n, r) and prints "ack n seq" once acknowledged.
// A small CHECKPOINT_LOG_BYTES makes checkpoints (and log segment deletion) happen
// while it runs.
import { ManualClock } from '../../engine/clock.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { openBoard } from './ingest-helpers.ts';
import { crashRows, crashPrice, CRASH_ROWS } from './crashRows.ts';

const dir = process.argv[2]!;
const clock = new ManualClock(NOW);
const opened = await openBoard(dir, clock, testBoard('small'), { checkpointLogBytes: 256 * 1024 });
const ids = crashRows(opened.durable.engine);
process.stdout.write(`ready ${opened.durable.engine.seq}\n`);
let next = 1;
const submitOne = async (): Promise<void> => {
  for (;;) {
    const n = next++;
    clock.advance(1);
    const result = await opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
    process.stdout.write(`ack ${n} ${result.seq}\n`);
  }
};
void CRASH_ROWS;
await Promise.all([submitOne(), submitOne(), submitOne(), submitOne()]);
