// /steam is a function of the durable board: the service as a child process (tsx
// service/main.ts on a DATA_DIR, BOARD=small, a frozen clock, no checkpoint timer) lists
// the same moves, byte for byte at the same X-Board-Seq, after a clean stop (SIGTERM: the
// last checkpoint holds the detector's histories and moves) and after SIGKILL (that
// checkpoint plus the log after it, replayed through the detector). A row's price
// history outlives the restart too: a move half made before it completes after it.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { startServiceChild, type ServiceChild } from '../../fixtures/harness/service-child.ts';
import { httpRequest } from '../helpers/server.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';
import { INGEST_TOKEN, post } from '../replicas/fleet-helpers.ts';

interface Row {
  id: string;
  priceAmerican: number | null;
  side: string;
  suspended: boolean;
}

interface SteamMove {
  oddsId: string;
  fromPriceAmerican: number;
  toPriceAmerican: number;
}

const SETTINGS = { INGEST_TOKEN, CHECKPOINT_INTERVAL_MS: '0', WAL_FSYNC: '0' };

/** The implied probability of an American price. */
function implied(american: number): number {
  return american < 0 ? -american / (100 - american) : 100 / (american + 100);
}

/** The American price of an implied probability (rounded to a whole price). */
function americanOf(probability: number): number {
  return probability >= 0.5 ? -Math.round((100 * probability) / (1 - probability)) : Math.round((100 * (1 - probability)) / probability);
}

/** The price `points` implied percentage points shorter than `american`. */
function shortened(american: number, points: number): number {
  return americanOf(implied(american) + points / 100);
}

async function ingest(child: ServiceChild, prices: Map<string, number>): Promise<number> {
  const body = [...prices].map(([id, priceAmerican]) => JSON.stringify({ op: 'price', id, priceAmerican })).join('\n') + '\n';
  const reply = await post(child.ingestPort, '/ingest/v1/batches', body, { Authorization: `Bearer ${INGEST_TOKEN}` });
  assert.equal(reply.status, 200, reply.body);
  return (JSON.parse(reply.body) as { seq: number }).seq;
}

/** /steam's bytes and the seq they reflect. */
async function steamAt(child: ServiceChild, seq: number): Promise<{ body: string; moves: SteamMove[] }> {
  const reply = await httpRequest(child.port, '/api/v1/steam?limit=500');
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['x-board-seq'], String(seq));
  const body = reply.body.toString();
  return { body, moves: (JSON.parse(body) as { data: SteamMove[] }).data };
}

describe('/steam across restarts of the service process', { timeout: 120_000 }, () => {
  it('SIGTERM and SIGKILL restarts list the moves listed before, and a move begun before a restart completes after it', async () => {
    const dir = tempDataDir('steam-restart-');
    let child: ServiceChild | null = null;
    try {
      child = await startServiceChild(dir, SETTINGS);
      // priced pinnacle (a fair-line book) rows of two-way moneylines, not too short to shorten by 6 points
      const reply = await httpRequest(child.port, '/api/v1/odds?sportsbook=pinnacle&market=moneyline&limit=200');
      const rows = (JSON.parse(reply.body.toString()) as { data: Row[] }).data.filter(
        (row) => row.priceAmerican !== null && !row.suspended && (row.side === 'HOME' || row.side === 'AWAY') && implied(row.priceAmerican) < 0.8,
      );
      assert.ok(rows.length >= 7, `only ${rows.length} pinnacle moneyline rows`);
      const price = new Map(rows.map((row) => [row.id, row.priceAmerican!]));
      const [half, ...others] = rows.map((row) => row.id);
      const before = others.slice(0, 3);
      const after = others.slice(3, 6);

      // before the first restart: three moves of 6 points, and `half` shortened by 1.4 (no move)
      const first = new Map<string, number>([[half!, shortened(price.get(half!)!, 1.4)], ...before.map((id) => [id, shortened(price.get(id)!, 6)] as [string, number])]);
      let seq = await ingest(child, first);
      const listed = await steamAt(child, seq);
      assert.deepEqual(listed.moves.map((m) => m.oddsId).sort(), [...before].sort(), 'the three 6-point moves, not the 1.4-point one');

      // a clean stop writes the last checkpoint; the restarted service lists the same moves
      assert.equal(await child.stop(), 0);
      child = await startServiceChild(dir, SETTINGS);
      assert.equal(child.seq, seq);
      assert.equal((await steamAt(child, seq)).body, listed.body, 'after SIGTERM');

      // `half` shortens by another 1.4 points: 2.8 from the price in force before the restart
      const second = new Map<string, number>([[half!, shortened(first.get(half!)!, 1.4)], ...after.map((id) => [id, shortened(price.get(id)!, 6)] as [string, number])]);
      seq = await ingest(child, second);
      const relisted = await steamAt(child, seq);
      const completed = relisted.moves.find((m) => m.oddsId === half);
      assert.ok(completed !== undefined, 'the move begun before the restart completes after it (the row\'s price history was kept)');
      assert.equal(completed.fromPriceAmerican, price.get(half!));
      assert.equal(completed.toPriceAmerican, second.get(half!));
      assert.equal(relisted.moves.length, 7);

      // SIGKILL: the checkpoint of the clean stop plus the log after it, replayed through the detector
      assert.equal(await child.kill(), 'SIGKILL');
      child = await startServiceChild(dir, SETTINGS);
      assert.equal(child.seq, seq);
      assert.match(child.readyLine, /\+ 1 log record/);
      assert.equal((await steamAt(child, seq)).body, relisted.body, 'after SIGKILL');
    } finally {
      await child?.kill().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
