// A stream resume from a clk older than the board's tombstones (10 minutes), inside the
// replay window: answered from the tick archive with the rows removed since (as
// tombstones) and the board's changed rows, chained from the held clk, no resync and no
// image; the client's rows then equal /odds. Real durable app, real WebSocket client.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { StreamTestClient, byId, oddsRows } from '../stream/streamClient.ts';

const MINUTE = 60_000;
let t: TestApp;
let archiveDir: string;

before(async () => {
  archiveDir = mkdtempSync(join(tmpdir(), 'odds-replay-stream-'));
  t = await startTestApp({ dataDir: true, env: { ARCHIVE_DIR: archiveDir, ARCHIVE_INTERVAL_MS: '3600000' } });
});

after(async () => {
  await t?.close();
  rmSync(archiveDir, { recursive: true, force: true });
});

async function submit(changes: unknown[]): Promise<void> {
  t.clock.advance(1000);
  await t.app.durable!.durable.ingest.submit(changes);
  await t.app.durable!.archive!.flush();
}

for (const format of ['json', 'msgpack'] as const) {
  test(`a ${format} resume from a clk past the tombstone horizon is answered from the archive, with the rows removed since`, async () => {
    const filter = { league: ['nba'] };
    let client = await StreamTestClient.open(t.port);
    client.subscribe('s', { filter, format });
    await eventually(() => client.state('s').images === 1, 20_000);
    const held = client.state('s');
    const ids = [...held.rows.keys()];
    assert.ok(ids.length >= 6);
    client.close();
    // away: two rows removed, one repriced, then 11 minutes on the board recycles the tombstones
    const gone = [ids[0]!, ids[3]!];
    await submit(gone.map((id) => ({ op: 'remove', id })));
    await submit([{ op: 'price', id: ids[1], priceAmerican: format === 'json' ? 321 : 322 }]);
    t.clock.advance(11 * MINUTE);
    await submit([{ op: 'price', id: ids[2], priceAmerican: format === 'json' ? -321 : -322 }]);
    const point = Number.parseInt(held.clk!.split('.')[2]!, 36);
    assert.ok(point < t.app.engine.deltaHorizon(), 'the clk is older than the tombstones the board holds');

    client = await StreamTestClient.open(t.port);
    client.subscribe('s', { filter, format, clk: held.clk });
    const resumed = client.state('s');
    resumed.rows = held.rows;
    resumed.clk = held.clk;
    await eventually(() => resumed.deltas > 0, 10_000);
    await client.sync();
    assert.deepEqual(resumed.breaks, []);
    assert.equal(resumed.images, 0, 'no image');
    assert.equal(resumed.resyncs, 0);
    assert.ok(!client.messages.some((m) => m.op === 'status'), JSON.stringify(client.messages.filter((m) => m.op === 'status')));
    assert.ok(client.messages.filter((m) => m.op === 'delta').every((m) => m.__binary === (format === 'msgpack' ? true : undefined)));
    const tombstones = client.messages.filter((m) => m.op === 'delta').flatMap((m) => m.rows as { id: string; removed?: boolean }[]).filter((row) => row.removed === true).map((row) => row.id);
    assert.deepEqual(tombstones.sort(), [...gone].sort());
    for (const id of gone) assert.equal(t.app.engine.slotOf(id), -1, 'the board no longer holds the removed row');
    assert.deepEqual(byId(resumed.rows.values()), byId(await oddsRows(t.port, 'league=nba')));
    client.close();
    // the removed rows come back for the next case
    t.clock.advance(1000);
  });
}
