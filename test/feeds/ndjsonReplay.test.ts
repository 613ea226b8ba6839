// The NDJSON replayer: batches, progress, resuming with --from-line, refusals named by line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ManualClock } from '../../engine/clock.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { createServer } from 'node:net';
import { HttpBatchSink, InProcessSink } from '../../feeds/batchSink.ts';
import { replayNdjson } from '../../feeds/ndjsonReplay.ts';
import { openBoard, tempDataDir, type OpenedBoard } from '../ingest/ingest-helpers.ts';
import { NOW } from '../../fixtures/harness/now.ts';

const board = generateBoard({ seed: 42, size: 'small', now: NOW });
let opened: OpenedBoard;
let dir: string;
before(async () => {
  dir = tempDataDir('replay-');
  opened = await openBoard(dir, new ManualClock(NOW), board, { fsync: false });
});
after(async () => opened.close());

function priceLines(count: number, american: (i: number) => number): { id: string; lines: string[] } {
  const engine = opened.durable.engine;
  let slot = 0;
  while (!(engine.isLive(slot) && engine.store.priceAmerican[slot] !== 0)) slot++;
  const id = engine.idOf(slot);
  return { id, lines: Array.from({ length: count }, (_, i) => JSON.stringify({ op: 'price', id, priceAmerican: american(i) })) };
}

test('a file replays in batches with progress; --from-line resumes; a refused line is named', async () => {
  const { id, lines } = priceLines(25, (i) => 110 + i);
  const file = join(dir, 'changes.ndjson');
  writeFileSync(file, lines.join('\n') + '\n');
  const progress: string[] = [];
  const sink = new InProcessSink(opened.durable.ingest);
  const result = await replayNdjson({ sink, file, batchSize: 10, progress: (l) => progress.push(l) });
  assert.deepEqual({ ...result }, { lines: 25, changes: 25, batches: 3, lastLine: 25 });
  assert.equal(progress.length, 3);
  assert.match(progress[2], /\[#{20}\] 100\.0% line 25 · 25 changes in 3 batches/);
  const engine = opened.durable.engine;
  assert.equal(engine.store.priceAmerican[engine.slotOf(id)], 134);

  const resumed = await replayNdjson({ sink, file, fromLine: 21, batchSize: 10 });
  assert.deepEqual({ ...resumed }, { lines: 5, changes: 5, batches: 1, lastLine: 25 });

  writeFileSync(file, [lines[0], JSON.stringify({ op: 'price', id, priceAmerican: 5 })].join('\n'));
  await assert.rejects(replayNdjson({ sink, file }), /lines 1-2 were refused: .*line 2: invalid_price.*--from-line 1/);
  writeFileSync(file, `${lines[0]}\n{not json\n`);
  await assert.rejects(replayNdjson({ sink, file }), /line 2 is not JSON/);
});

test('- replays stdin', async () => {
  const { id, lines } = priceLines(3, (i) => 150 + i);
  const result = await replayNdjson({ sink: new InProcessSink(opened.durable.ingest), file: '-', stdin: Readable.from([`${lines.join('\n')}\n`]), batchSize: 2 });
  assert.deepEqual({ ...result }, { lines: 3, changes: 3, batches: 2, lastLine: 3 });
  const engine = opened.durable.engine;
  assert.equal(engine.store.priceAmerican[engine.slotOf(id)], 152);
});

test('a batch the ingest listener cannot take is sent again, then the replay stops naming the line to resume from', async () => {
  const { lines } = priceLines(3, (i) => 170 + i);
  const file = join(dir, 'away.ndjson');
  writeFileSync(file, lines.join('\n') + '\n');
  // a port nothing listens on
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = server.address() as { port: number };
      server.close(() => resolve(free));
    });
  });
  const said: string[] = [];
  const sink = new HttpBatchSink({ url: `http://127.0.0.1:${port}`, token: 't' });
  await assert.rejects(
    replayNdjson({ sink, file, batchSize: 2, resends: 2, retryBaseMs: 5, log: (l) => said.push(l) }),
    /lines 1-2 were not taken: .*ECONNREFUSED.*; resume with --from-line 1 once the ingest listener takes batches again/,
  );
  assert.equal(said.length, 2, said.join('\n'));
  assert.match(said[0], /ndjson: lines 1-2 not taken \(ingest_unreachable: .*\); sending them again in/);
});
