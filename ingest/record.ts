// What one log record holds: a validated batch in its normalized form plus the time it
// is applied at, msgpack-encoded:
//
//   { v: 1, t: <apply time, epoch ms>, c: [LoggedChange, ...] }
//
// Normalized means everything that depends on the board at the time was resolved by
// the validator: prices are American (priceDecimal converted), event times are epoch
// ms, odds rows carry their derived teamId, box rows carry their event's teams and
// league. Replaying a record needs nothing but the state before it: the engine applies
// it at `t` (never the replaying machine's clock) and the cold store upserts its cold
// records, so a replay rebuilds the same board, the same seq and the same delta feed.
// The seq is not stored: it is a function of the state and the batch.

import { Packr } from 'msgpackr';
import type { Change, PriceByIdChange } from '../engine/engine.ts';
import type { EventRecord, EventStatus, OddsInput, SourceRecord } from '../engine/model.ts';
import type { ColdRecordChange } from '../persistence/coldWrites.ts';

export const RECORD_VERSION = 1;

export type LoggedChange =
  | { op: 'upsert'; row: OddsInput }
  | PriceByIdChange
  | { op: 'remove'; id: string }
  | { op: 'status'; eventId: string; status: EventStatus }
  | { op: 'source'; source: SourceRecord }
  | { op: 'event'; event: EventRecord }
  | Exclude<ColdRecordChange, { op: 'event' }>;

export interface BatchRecord {
  /** Apply time, epoch ms. */
  time: number;
  changes: LoggedChange[];
}

const packr = new Packr({ useRecords: false });

export function encodeRecord(record: BatchRecord): Buffer {
  return packr.pack({ v: RECORD_VERSION, t: record.time, c: record.changes });
}

export function decodeRecord(payload: Uint8Array): BatchRecord {
  const raw = packr.unpack(payload) as { v?: unknown; t?: unknown; c?: unknown };
  if (raw === null || typeof raw !== 'object' || raw.v !== RECORD_VERSION || typeof raw.t !== 'number' || !Array.isArray(raw.c)) {
    throw new Error(`not a version ${RECORD_VERSION} batch record`);
  }
  return { time: raw.t, changes: raw.c as LoggedChange[] };
}

/** The engine's share of a batch (events go to both the engine and the cold store). */
export function engineChanges(changes: readonly LoggedChange[]): Change[] {
  const out: Change[] = [];
  for (const change of changes) if (!isColdOnly(change)) out.push(change as Change);
  return out;
}

/**
 * engineChanges, keeping `slots` (one per change, as validation resolved them) parallel
 * to what the engine gets; the batch itself when it has no cold change (a batch of ticks).
 */
export function engineShare(changes: readonly LoggedChange[], slots: readonly number[] | undefined): { changes: readonly Change[]; slots: readonly number[] | undefined } {
  let cold = 0;
  for (let i = 0; i < changes.length; i++) if (isColdOnly(changes[i])) cold++;
  if (cold === 0) return { changes: changes as readonly Change[], slots };
  const out: Change[] = [];
  const outSlots: number[] | undefined = slots === undefined ? undefined : [];
  for (let i = 0; i < changes.length; i++) {
    const change = changes[i];
    if (isColdOnly(change)) continue;
    out.push(change as Change);
    outSlots?.push(slots![i]);
  }
  return { changes: out, slots: outSlots };
}

function isColdOnly(change: LoggedChange): boolean {
  return change.op === 'team' || change.op === 'player' || change.op === 'season' || change.op === 'boxscore';
}

/** The cold store's share of a batch. */
export function coldChanges(changes: readonly LoggedChange[]): ColdRecordChange[] {
  const out: ColdRecordChange[] = [];
  for (const change of changes) {
    if (change.op === 'team' || change.op === 'player' || change.op === 'season' || change.op === 'boxscore' || change.op === 'event') out.push(change);
  }
  return out;
}
