// Child process of storage-process.test.ts: opens DATA_DIR (argv[2]) with the small
// board, acknowledges 20 batches (printing "ack n"), then takes a checkpoint whose
// rename of the new checkpoint file stops (argv[3]: "before" the rename, or "after" it,
// before the directory fsync) and prints "paused"; while it hangs, 5 more batches are
// acknowledged first. The parent SIGKILLs it there: a crash in the checkpoint's rename.
import { join } from 'node:path';
import { ManualClock } from '../../engine/clock.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { DurableBoard } from '../../ingest/durableBoard.ts';
import { nodeStorage, type Storage } from '../../persistence/log/storage.ts';
import { openPersistence } from '../../persistence/persistence.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { crashPrice, crashRows } from '../ingest/crashRows.ts';

const dir = process.argv[2]!;
const when = process.argv[3] as 'before' | 'after';
let pausing = false;
const hang = () => new Promise<void>(() => {});
const storage: Storage = {
  ...nodeStorage,
  async rename(from, to) {
    if (pausing && to.endsWith('.ckpt')) {
      if (when === 'after') await nodeStorage.rename(from, to);
      process.stdout.write('paused\n');
      await hang();
    }
    await nodeStorage.rename(from, to);
  },
};
const clock = new ManualClock(NOW);
const board = testBoard('small');
const persistence = openPersistence({ path: join(dir, 'odds.db'), env: {} });
const durable = DurableBoard.open({ dataDir: dir, clock, cold: persistence, checkpointIntervalMs: 0, env: {}, warn: () => {}, storage });
if (durable.fresh) {
  loadBoard(durable.engine, board);
  persistence.loadCold(board, { eventsWithOdds: new Set(durable.engine.eventIdsWithLiveRows()) });
  await durable.checkpointNow();
}
const ids = crashRows(durable.engine);
const submit = async (n: number) => {
  clock.advance(1000);
  await durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
  process.stdout.write(`ack ${n}\n`);
};
for (let n = 1; n <= 20; n++) await submit(n);
pausing = true;
const checkpoint = durable.checkpointNow();
for (let n = 21; n <= 25; n++) await submit(n);
await checkpoint;
