// A refused batch leaves no trace, over the real server and real files: a futures event
// whose context nests 20,000 levels deep is refused whole with 400 too_deep (it was a
// 500 once, after the batch had been registered as in flight, and a later status change
// for the never-created event was then acknowledged); a body of 1,000,000 bad lines is
// answered 400 naming the first 100 and counting the rest, in a small body.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, testBoard, type TestApp } from '../helpers/app.ts';
import { ndjson, postBatch } from './ingest-client.ts';

const board = testBoard('small');

describe('refused batches', () => {
  let t: TestApp;
  let port: number;
  let token: string;
  before(async () => {
    // room for a body of a million lines
    t = await startTestApp({ board, dataDir: true, env: { INGEST_MAX_BATCH_BYTES: String(40 * 1024 * 1024) } });
    port = (await t.app.durable!.listen()).port;
    token = t.app.durable!.token.token;
  });
  after(async () => {
    await t.close();
  });

  const futuresEvent = (id: string, context: unknown) => ({
    op: 'event',
    event: {
      id, league: 'nba', homeTeamId: null, homeTeamName: null, awayTeamId: null, awayTeamName: null,
      startTime: '2027-06-20T00:00:00Z', status: 'in_progress', seasonYear: 2026, context, isFutures: true,
    },
  });

  it('a change nesting 20,000 levels deep: 400 too_deep, and the event it would have created does not exist for the next batch', async () => {
    // written by hand: JSON.stringify itself recurses, and 20,000 levels overflow its stack
    const deep = `${'{"a":'.repeat(20_000)}{}${'}'.repeat(20_000)}`;
    const line = JSON.stringify(futuresEvent('nba-deep-futures', '@DEEP@')).replace('"@DEEP@"', deep);
    const seqBefore = t.app.engine.seq;
    const refused = await postBatch(port, token, Buffer.from(`${line}\n`));
    assert.equal(refused.status, 400, JSON.stringify(refused.body).slice(0, 300));
    assert.equal(refused.body.code, 'invalid_batch');
    assert.equal(refused.body.errors[0].code, 'too_deep');
    assert.equal(refused.body.errors[0].index, 0);
    const status = await postBatch(port, token, ndjson([{ op: 'status', eventId: 'nba-deep-futures', status: 'final' }]));
    assert.equal(status.status, 400, 'a status change for an event that was never created is refused');
    assert.equal(t.app.engine.seq, seqBefore, 'nothing changed');
    // the same event at an ordinary depth is taken, so the refusal was the depth alone
    const ok = await postBatch(port, token, ndjson([futuresEvent('nba-deep-futures', { round: { of: 'finals' } }), { op: 'status', eventId: 'nba-deep-futures', status: 'final' }]));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('1,000,000 bad lines: 400 with the first 100 bad changes listed and the other 999,900 counted, in a small body', async () => {
    const line = Buffer.from('{"op":"price","id":"not an id"\n');
    const body = Buffer.alloc(line.length * 1_000_000);
    for (let i = 0; i < 1_000_000; i++) line.copy(body, i * line.length);
    check(await postBatch(port, token, body), 1_000_000);

    function check(answer: Awaited<ReturnType<typeof postBatch>>, count: number): void {
      assert.equal(answer.status, 400);
      assert.equal(answer.body.code, 'invalid_batch');
      const indexes = new Set((answer.body.errors as { index: number }[]).map((e) => e.index));
      assert.equal(indexes.size, 100);
      assert.deepEqual([...indexes].sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i));
      assert.equal(answer.body.errorsOmitted, count - 100);
      assert.match(answer.body.detail, new RegExp(`^${count} of ${count} changes are invalid`));
      assert.ok(JSON.stringify(answer.body).length < 64 * 1024, `${JSON.stringify(answer.body).length} bytes`);
    }
  });

  it('a batch mixing bad JSON lines and changes that fail their checks lists the first 100 bad changes in index order', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) lines.push(i % 2 === 0 ? '{not json' : JSON.stringify({ op: 'status', eventId: 'no-such-event', status: 'final' }));
    const reply = await postBatch(port, token, Buffer.from(lines.join('\n')));
    assert.equal(reply.status, 400);
    const indexes = [...new Set((reply.body.errors as { index: number }[]).map((e) => e.index))];
    assert.deepEqual(indexes, Array.from({ length: 100 }, (_, i) => i));
    assert.equal(reply.body.errorsOmitted, 200);
  });
});
