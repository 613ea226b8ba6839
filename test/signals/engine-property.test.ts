// Property: the kept edge and arbitrage books equal a brute-force
// recomputation from the engine's live rows, as /odds renders them, after every one
// of 10k random simulator ticks (price moves, suspensions, lines added and pulled,
// events going live and final) while a ManualClock runs on, so sharp quotes also age
// past the staleness window. Every 1000 ticks the routes' full walks over HTTP
// (/edges and /arbitrage, small pages, cursors) must equal the brute force too.
//
// The brute force is the naive reference (engine/signals/bruteForce.ts) run per
// event over a mirror of the rendered rows; an event's result is recomputed when one
// of its rows changed or when the clock passes the next instant at which one of its
// sharp quotes turns stale (groups never span events, so this is the whole-board
// recomputation, only not redone for events nothing can have changed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeKind } from '../../engine/engine.ts';
import { bruteForceArbitrage, bruteForceEdges, type OddsRowJson } from '../helpers/bruteForce.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { DEFAULT_SIGNALS_CONFIG, type ArbitrageRecord, type EdgeRecord } from '../../engine/signals/records.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const TICKS = 10_000;
const TICK_MS = 150; // 10k ticks = 25 simulated minutes: every loaded sharp quote ages out
const HTTP_EVERY = 1000;
const STALE = DEFAULT_SIGNALS_CONFIG.stalenessMs;
const SHARP = new Set(DEFAULT_SIGNALS_CONFIG.sharpBooks);

function byScore<T extends { id: string }>(score: (r: T) => number) {
  return (a: T, b: T) => score(b) - score(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
const byProfit = byScore((r: ArbitrageRecord) => r.profit);
const byEdge = byScore((r: EdgeRecord) => r.edge);

interface EventReference {
  arbitrage: ArbitrageRecord[];
  edges: EdgeRecord[];
  /** The result may change once the clock passes this (a sharp quote turns stale). */
  validUntil: number;
}

/** Rendered rows per event, kept in step with the engine through engine.subscribe. */
class Mirror {
  readonly byEvent = new Map<string, Map<number, OddsRowJson>>();
  private readonly eventOfSlot = new Map<number, string>();
  private readonly dirty = new Set<number>();
  readonly touched = new Set<string>();

  constructor(private readonly t: TestApp) {
    const engine = t.app.engine;
    for (let slot = 0; slot < engine.store.size; slot++) if (engine.isLive(slot)) this.put(slot);
    engine.subscribe({ rowChanged: (slot: number, _kind: ChangeKind) => void this.dirty.add(slot) });
  }

  /** Applies the slots changed since the last call; returns the events they touched. */
  sync(): Set<string> {
    this.touched.clear();
    for (const slot of this.dirty) {
      const old = this.eventOfSlot.get(slot);
      if (old !== undefined) {
        this.byEvent.get(old)!.delete(slot);
        this.eventOfSlot.delete(slot);
        this.touched.add(old);
      }
      if (this.t.app.engine.isLive(slot)) this.touched.add(this.put(slot));
    }
    this.dirty.clear();
    return this.touched;
  }

  private put(slot: number): string {
    const row = JSON.parse(JSON.stringify(this.t.app.engine.rowObject(slot, 'all'))) as OddsRowJson;
    let rows = this.byEvent.get(row.eventId);
    if (rows === undefined) this.byEvent.set(row.eventId, (rows = new Map()));
    rows.set(slot, row);
    this.eventOfSlot.set(slot, row.eventId);
    return row.eventId;
  }
}

function referenceOf(rows: Map<number, OddsRowJson> | undefined, now: number): EventReference {
  const list = rows === undefined ? [] : [...rows.values()];
  let validUntil = Infinity;
  for (const row of list) {
    if (!SHARP.has(row.sportsbook)) continue;
    const expires = Date.parse(row.updated) + STALE;
    if (expires >= now && expires < validUntil) validUntil = expires;
  }
  return { arbitrage: bruteForceArbitrage(list), edges: bruteForceEdges(list, now, { minEdge: 0 }), validUntil };
}

async function walk<T>(t: TestApp, route: string, query: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `${route}?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { reply, body } = await t.call(route, path);
    assert.equal(reply.status, 200, path);
    out.push(...(body.data as T[]));
    cursor = body.nextCursor ?? null;
  } while (cursor !== null);
  return out;
}

test('books equal the brute force over the live rows after every one of 10k simulator ticks; routes agree every 1000', async () => {
  const t = await startTestApp();
  try {
    const signals = new EngineSignals(t.app.engine);
    const mirror = new Mirror(t);
    const perEvent = new Map<string, EventReference>();
    for (const eventId of mirror.byEvent.keys()) perEvent.set(eventId, referenceOf(mirror.byEvent.get(eventId), t.clock.now()));
    let sawArbitrage = 0;
    let sawEdges = 0;
    let maxEdges = 0;
    for (let tick = 1; tick <= TICKS; tick++) {
      t.clock.advance(TICK_MS);
      t.app.simulator.step(1 + (tick % 3));
      const now = t.clock.now();
      for (const eventId of mirror.sync()) perEvent.set(eventId, referenceOf(mirror.byEvent.get(eventId), now));
      const arbitrage: ArbitrageRecord[] = [];
      const edges: EdgeRecord[] = [];
      for (const [eventId, ref] of perEvent) {
        const current = now > ref.validUntil ? referenceOf(mirror.byEvent.get(eventId), now) : ref;
        if (current !== ref) perEvent.set(eventId, current);
        for (const r of current.arbitrage) arbitrage.push(r);
        for (const r of current.edges) edges.push(r);
      }
      arbitrage.sort(byProfit);
      edges.sort(byEdge);
      assert.deepEqual(signals.books.arbitrage.all(), arbitrage, `arbitrage after tick ${tick}`);
      assert.deepEqual(signals.books.edges.all(now), edges, `edges after tick ${tick}`);
      if (arbitrage.length > 0) sawArbitrage++;
      if (edges.length > 0) sawEdges++;
      maxEdges = Math.max(maxEdges, edges.length);
      if (tick % HTTP_EVERY === 0) {
        assert.deepEqual(await walk<ArbitrageRecord>(t, '/api/v1/arbitrage', 'min_profit=0&limit=1'), arbitrage, `/arbitrage walk after tick ${tick}`);
        assert.deepEqual(await walk<EdgeRecord>(t, '/api/v1/edges', 'min_edge=0&limit=7'), edges, `/edges walk after tick ${tick}`);
      }
    }
    signals.close();
    const stats = t.app.simulator.stats;
    assert.ok(stats.linesAdded > 0 && stats.linesPulled > 0 && stats.suspensionToggles > 0, JSON.stringify(stats));
    assert.ok(sawArbitrage > 0 && sawEdges > 0, `arbitrage on ${sawArbitrage} ticks, edges on ${sawEdges} (max ${maxEdges})`);
    assert.deepEqual(t.logs, []);
  } finally {
    await t.close();
  }
});
