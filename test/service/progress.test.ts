// Progress of a restore: reading the checkpoint and replaying the log after it print a
// bar with the count, rate and ETA on a terminal, and one line when each step starts and
// one when it ends anywhere else (service/progress.ts through DurableBoard's progress).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { DurableBoard, type StepProgress } from '../../ingest/durableBoard.ts';
import { openPersistence } from '../../persistence/persistence.ts';
import { startProgress } from '../../service/progress.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { openBoard, tempDataDir } from '../ingest/ingest-helpers.ts';

const BATCHES = 30;

/** A stream that keeps what is written, as a terminal (tty) or as a pipe. */
function capture(tty: boolean): { stream: Writable & { isTTY: boolean }; text: () => string } {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
    { isTTY: tty },
  );
  return { stream, text: () => text };
}

describe('restore progress', () => {
  const dir = tempDataDir('odds-progress-');
  const clock = new ManualClock(NOW);

  before(async () => {
    // a checkpoint of the small board, then BATCHES logged batches after it (no last checkpoint)
    const opened = await openBoard(dir, clock, testBoard());
    const s = opened.durable.engine.store;
    let slot = 0;
    while (!(s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE)) slot++;
    const id = opened.durable.engine.idOf(slot);
    for (let i = 0; i < BATCHES; i++) await opened.durable.ingest.submit([{ op: 'price', id, priceAmerican: -110 - i }]);
    await opened.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const restore = (progress: StepProgress) => {
    const persistence = openPersistence({ path: join(dir, 'odds.db'), env: {} });
    const durable = DurableBoard.open({ dataDir: dir, clock, cold: persistence, checkpointIntervalMs: 0, env: {}, warn: () => {}, progress });
    return { durable, close: async () => { await durable.close(); persistence.close(); } };
  };

  it('prints one line when each step starts and one when it ends, off a terminal', async () => {
    const out = capture(false);
    const { durable, close } = restore((label, total, unit) => startProgress(label, total, { unit, stream: out.stream }));
    try {
      assert.equal(durable.restore.replayedRecords, BATCHES);
      const lines = out.text().split('\n').filter((line) => line !== '');
      assert.equal(lines.length, 4, out.text());
      assert.match(lines[0]!, /^loading checkpoint checkpoint-\d{16}\.ckpt: started$/);
      assert.match(lines[1]!, new RegExp(`^loading checkpoint checkpoint-\\d{16}\\.ckpt: done, ${durable.engine.liveRows.toLocaleString('en-US')} rows in [\\d.]+s`));
      assert.equal(lines[2], `replaying the log: started (${BATCHES} records)`);
      assert.match(lines[3]!, new RegExp(`^replaying the log: done, ${BATCHES} records in [\\d.]+s.*\\(${BATCHES} changes\\)$`));
      assert.doesNotMatch(out.text(), /\r/, 'no bar redrawn in place');
    } finally {
      await close();
    }
  });

  it('draws a bar with the count, rate and ETA on a terminal, then the final line', async () => {
    const out = capture(true);
    const { close } = restore((label, total, unit) => startProgress(label, total, { unit, stream: out.stream }));
    try {
      const text = out.text();
      assert.match(text, new RegExp(`\\rreplaying the log  \\[=*\\s*\\]\\s+\\d+%  1/${BATCHES} records  [\\d,]+/s  ETA `), JSON.stringify(text));
      assert.match(text, new RegExp(`\\r\\u001b\\[Kreplaying the log: done, ${BATCHES} records in `));
    } finally {
      await close();
    }
  });
});
