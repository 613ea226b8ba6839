// Test helpers for the board snapshot: an independent reference serializer of the snapshot
// document (plain objects from the engine's reference row renderer, JSON.stringify),
// body decoding, and boards to run against.
import { gunzipSync } from 'node:zlib';
import type { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { isoMillis, isoMinutesZ } from '../../engine/timeFormat.ts';
import type { SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { NOW, boardOf, liveSlots, makeTestBoard, newEngine, referenceSort } from './engine-helpers.ts';

export { NOW };

export function rawBody(body: SnapshotBody): Buffer {
  return gunzipSync(Buffer.concat(body.chunks as Buffer[]));
}

export interface SnapshotDoc {
  updated: string;
  syncToken: string;
  count: number;
  events: SnapshotEvent[];
}

export interface SnapshotEvent {
  id: string;
  league: string;
  startTime: string;
  status: string;
  homeTeamId: string | null;
  awayTeamId: string | null;
  odds: Record<string, unknown>[];
}

export function parseBody(body: SnapshotBody): SnapshotDoc {
  return JSON.parse(rawBody(body).toString('utf8')) as SnapshotDoc;
}

/**
 * The snapshot document built the slow, obvious way: live rows found by scanning every slot,
 * grouped by event, events sorted by (startTime, id), rows by (sportsbook, id), each
 * row from engine.rowObject plus its history entries.
 */
export function referenceDoc(engine: OddsEngine, withHistory: boolean): SnapshotDoc {
  const byEvent = new Map<number, number[]>();
  for (const slot of liveSlots(engine)) {
    const ev = engine.store.event[slot];
    const list = byEvent.get(ev);
    if (list === undefined) byEvent.set(ev, [slot]);
    else list.push(slot);
  }
  const events: SnapshotEvent[] = [];
  let count = 0;
  for (const [ev, slots] of byEvent) {
    const info = engine.event(engine.store.events.get(ev))!;
    const odds = referenceSort(engine, slots).map((slot) => ({
      ...engine.rowObject(slot, 'all'),
      priceHistory: withHistory ? [...engine.history(slot)] : null,
    }));
    count += odds.length;
    events.push({
      id: info.id,
      league: info.league,
      startTime: isoMinutesZ(info.startTime),
      status: info.status,
      homeTeamId: info.homeTeamId,
      awayTeamId: info.awayTeamId,
      odds,
    });
  }
  const startOf = (e: SnapshotEvent): number => engine.event(e.id)!.startTime;
  events.sort((a, b) => startOf(a) - startOf(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const asOf = engine.asOf();
  return { updated: isoMillis(asOf), syncToken: String(asOf), count, events };
}

export function referenceText(engine: OddsEngine, withHistory: boolean): string {
  return JSON.stringify(referenceDoc(engine, withHistory));
}

/** A fixture board (real generator), small unless asked. */
export function fixtureEngine(seed = 1, retentionMs?: number, size: 'small' | 'medium' = 'small') {
  const { engine, clock } = newEngine(retentionMs === undefined ? {} : { tombstoneRetentionMs: retentionMs });
  const board = generateBoard({ seed, size, now: NOW });
  loadBoard(engine, board);
  return { engine, clock, board };
}

/** The engine tests' board: ids that are prefixes of each other, futures, DFS rows. */
export function testBoardEngine(seed: number, games: number, retentionMs?: number) {
  const { engine, clock } = newEngine(retentionMs === undefined ? {} : { tombstoneRetentionMs: retentionMs });
  loadBoard(engine, boardOf(makeTestBoard(seed, games), seed));
  return { engine, clock };
}
