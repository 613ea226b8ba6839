// One case of the storage-fault property (test/persistence/storage-faults.property.test.ts)
// and its soak (bench/durability-soak.ts): a tiny durable board in a temp DATA_DIR takes
// a random sequence of batches and checkpoints while one fault fires, either in the
// storage seam under the log and the checkpoint writer (a short write, ENOSPC, EIO or a
// crash at the Nth write, fsync, rename, truncate or unlink) or in a file at rest after
// the process stopped (a byte flipped or the file cut at a structural offset of a log
// segment or a checkpoint). Then the board starts again from DATA_DIR.
//
// The invariant: the start restores exactly the acknowledged state (the engine state's
// digest equals that of a twin board that took the same batches without faults, at the
// same record), or refuses with a message naming a file; then a repair without the loss
// flag drops nothing a valid checkpoint does not cover (a start after it is exact or
// refuses again), and a repair with the flag it names gives a start at a state the twin
// had. Two things no checksum can tell and the docs say so: after a crash, a record
// written but never acknowledged may be there (the twin's next state); and the newest
// segment cut at rest inside a frame looks like a torn write and loses its tail
// (reported as a torn tail). A cut at a frame boundary is not generated: nothing in the
// files can show it.

import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../engine/clock.ts';
import { engineState } from '../../engine/checkpoint.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { oddsId, type Board, type OddsInput } from '../../engine/model.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { DurableBoard, RestoreRefusedError } from '../../ingest/durableBoard.ts';
import { oddsRowFields } from '../../ingest/engineFeed.ts';
import { IngestError } from '../../ingest/ingest.ts';
import { listCheckpoints, checkpointLayout } from '../../persistence/log/checkpointFiles.ts';
import { crc32 } from '../../persistence/log/crc32.ts';
import { walDir } from '../../persistence/log/fileBatchLog.ts';
import { repairDataDir } from '../../persistence/log/repair.ts';
import { FRAME_HEADER_BYTES, listSegments, SEGMENT_HEADER_BYTES } from '../../persistence/log/segments.ts';
import { FaultyStorage, type FaultKind } from '../../persistence/log/storageFaults.ts';
import type { StorageOp } from '../../persistence/log/storage.ts';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';
import { mulberry32 } from '../../engine/random.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
/**
 * Where the cases' DATA_DIRs go: a RAM file system when there is one (thousands of
 * cases, each a few dozen fsyncs: the property is about what the files hold, not about
 * the disk; real disks and real crashes are storage-process.test.ts's), else tmpdir().
 */
const SCRATCH = process.env.FAULT_SCRATCH ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());

export type AtRestTarget = 'newest segment' | 'older segment' | 'newest checkpoint' | 'older checkpoint';
export type AtRestPart =
  | 'segment header' | 'frame length' | 'frame index' | 'payload crc' | 'header crc' | 'payload'
  | 'checkpoint magic' | 'checkpoint header' | 'checkpoint meta' | 'checkpoint body' | 'checkpoint trailer';

export type Fault =
  | { type: 'io'; op: StorageOp; nth: number; kind: FaultKind }
  | { type: 'flip'; target: AtRestTarget; part: AtRestPart; pick: number; mask: number }
  | { type: 'cut'; target: AtRestTarget; part: AtRestPart; pick: number };

export interface Case {
  /** Drives the batches' contents. */
  seed: number;
  batches: number;
  /** After which batch numbers (1-based) a checkpoint is taken. */
  checkpointAfter: number[];
  fault: Fault;
}

export interface Outcome {
  /** What happened, for the counts a run prints. */
  kind: 'exact' | 'exact after repair' | 'refused, repair with flag' | 'refused, nothing to rebuild' | 'crash: unacknowledged record present' | 'torn tail cut (cut at rest)' | 'fault not reached';
  acknowledged: number;
  restoredIndex: number;
}

/** A tiny board: two events of the small fixture board with their rows (a checkpoint of ~100 KB). */
type History = Parameters<Parameters<Board['forEachOdds']>[0]>[1];
let tiny: { board: Board; rows: OddsInput[] } | null = null;
function tinyBoard(): { board: Board; rows: OddsInput[] } {
  if (tiny !== null) return tiny;
  const full = generateBoard({ size: 'small', seed: 7, now: NOW });
  const perEvent = new Map<string, number>();
  full.forEachOdds((row) => perEvent.set(row.eventId, (perEvent.get(row.eventId) ?? 0) + 1));
  const events = full.events.filter((e) => !e.isFutures && (perEvent.get(e.id) ?? 0) >= 10).slice(0, 2);
  const keep = new Set(events.map((e) => e.id));
  const rows: OddsInput[] = [];
  const histories: History[] = [];
  full.forEachOdds((row, history) => {
    if (keep.has(row.eventId) && rows.length < 120) {
      rows.push({ ...row });
      histories.push(structuredClone(history)); // the generator reuses its buffer row after row
    }
  });
  const teamIds = new Set(events.flatMap((e) => [e.homeTeamId, e.awayTeamId]));
  const board: Board = {
    ...full,
    events,
    teams: full.teams.filter((t) => teamIds.has(t.id)),
    players: full.players.filter((p) => rows.some((r) => r.playerId === p.id)),
    teamBox: [],
    playerBox: [],
    oddsCount: rows.length,
    forEachOdds: (visit) => {
      rows.forEach((row, i) => visit(row, histories[i]!));
    },
  };
  tiny = { board, rows };
  return tiny;
}


/** The changes of a batch: price ticks and suspensions mostly, some odds rows (re)sent, a removal now and then. */
function batchChanges(rand: () => number, rows: OddsInput[]): unknown[] {
  const changes: unknown[] = [];
  const count = 1 + Math.floor(rand() * 6);
  for (let i = 0; i < count; i++) {
    const row = rows[Math.floor(rand() * rows.length)]!;
    const id = oddsId(row);
    const r = rand();
    if (r < 0.6) {
      if (row.dfsMultiplier !== null) changes.push({ op: 'price', id, dfsMultiplier: 0.5 + Math.floor(rand() * 150) / 100 });
      else changes.push({ op: 'price', id, priceAmerican: (rand() < 0.5 ? -1 : 1) * (100 + Math.floor(rand() * 400)) });
    } else if (r < 0.75) changes.push({ op: 'price', id, suspended: rand() < 0.5 });
    else if (r < 0.9) {
      const fields = oddsRowFields(row);
      changes.push({ op: 'odds', row: { ...fields, eventStartTime: new Date(row.eventStartTime).toISOString().slice(0, 16) } });
    } else changes.push({ op: 'remove', id });
  }
  return changes;
}

/**
 * A digest of everything a checkpoint saves (engineState: columns, pools, rings, event
 * table, change log, counters), each typed array's bytes as they are and the rest as
 * JSON: two boards with the same digest answer every query alike.
 */
function digest(board: DurableBoard): number {
  let crc = 0;
  const walk = (value: unknown): void => {
    if (ArrayBuffer.isView(value)) crc = crc32(new Uint8Array(value.buffer, value.byteOffset, value.byteLength), 0, value.byteLength, crc);
    else if (Array.isArray(value)) for (const item of value) walk(item);
    else if (value !== null && typeof value === 'object') for (const key of Object.keys(value).sort()) {
      crc = crc32(Buffer.from(key), 0, key.length, crc);
      walk((value as Record<string, unknown>)[key]);
    }
    else crc = crc32(Buffer.from(JSON.stringify(value) ?? 'undefined'), undefined, undefined, crc);
  };
  walk(engineState(board.engine));
  return crc;
}

interface Opened {
  board: DurableBoard;
  persistence: Persistence;
}

function open(dir: string, clock: ManualClock, storage: FaultyStorage | undefined, fsync: boolean): Opened {
  const persistence = openPersistence({ path: join(dir, 'odds.db'), env: {} });
  try {
    const board = DurableBoard.open({ dataDir: dir, clock, cold: persistence, checkpointIntervalMs: 0, checkpointLogBytes: 1 << 30, segmentBytes: 700, env: {}, warn: () => {}, fsync, storage });
    return { board, persistence };
  } catch (error) {
    persistence.close();
    throw error;
  }
}

async function close(opened: Opened): Promise<void> {
  try {
    await opened.board.close();
  } finally {
    opened.persistence.close();
  }
}

/** Where in `bytes` (a segment or a checkpoint file) the part lies: [start, end) of the bytes to damage. */
function partRange(bytes: Buffer, target: AtRestTarget, part: AtRestPart, pick: number): [number, number] | null {
  if (target.endsWith('segment')) {
    if (part === 'segment header') return bytes.length >= SEGMENT_HEADER_BYTES ? [0, SEGMENT_HEADER_BYTES] : null;
    const frames: number[] = [];
    for (let at = SEGMENT_HEADER_BYTES; at + FRAME_HEADER_BYTES <= bytes.length; at += FRAME_HEADER_BYTES + bytes.readUInt32LE(at)) frames.push(at);
    if (frames.length === 0) return null;
    const at = frames[pick % frames.length]!;
    const length = bytes.readUInt32LE(at);
    switch (part) {
      case 'frame length': return [at, at + 4];
      case 'frame index': return [at + 4, at + 12];
      case 'payload crc': return [at + 12, at + 16];
      case 'header crc': return [at + 16, at + 20];
      case 'payload': return [at + 20, at + 20 + length];
      default: return null;
    }
  }
  const layout = checkpointLayout(bytes);
  switch (part) {
    case 'checkpoint magic': return [0, 12];
    case 'checkpoint header': return [12, 40];
    case 'checkpoint meta': return layout.bodyStart > 40 ? [40, layout.bodyStart] : null;
    case 'checkpoint body': return [layout.bodyStart, layout.bodyEnd];
    case 'checkpoint trailer': return [layout.bodyEnd, layout.size];
    default: return null;
  }
}

/** Damages one file at rest; false when the case's target does not exist (nothing done). */
function damageAtRest(dir: string, fault: Extract<Fault, { type: 'flip' | 'cut' }>): boolean {
  let path: string | undefined;
  if (fault.target === 'newest segment') path = listSegments(walDir(dir)).at(-1)?.path;
  if (fault.target === 'older segment') path = listSegments(walDir(dir)).at(-2)?.path;
  if (fault.target === 'newest checkpoint') path = listCheckpoints(dir)[0]?.path;
  if (fault.target === 'older checkpoint') path = listCheckpoints(dir)[1]?.path;
  if (path === undefined) return false;
  const bytes = readFileSync(path);
  const range = partRange(bytes, fault.target, fault.part, fault.pick);
  if (range === null || range[1] <= range[0]) return false;
  const offset = range[0] + (fault.pick % (range[1] - range[0]));
  if (fault.type === 'flip') {
    bytes[offset] ^= fault.mask;
    writeFileSync(path, bytes);
  } else {
    // inside the part, never at its start: a cut at a frame boundary cannot be seen (see the header)
    const cut = range[1] - range[0] > 1 ? range[0] + 1 + (fault.pick % (range[1] - range[0] - 1)) : range[0] + 1;
    if (cut >= bytes.length) return false;
    truncateSync(path, cut);
  }
  return true;
}

let template: string | null = null;
/** A DATA_DIR with the tiny board loaded and checkpointed (record 0), made once per process. */
async function templateDir(board: Board): Promise<string> {
  if (template !== null) return template;
  const dir = mkdtempSync(join(SCRATCH, 'fault-template-'));
  const o = open(dir, new ManualClock(NOW), undefined, true);
  loadBoard(o.board.engine, board);
  o.persistence.loadCold(board, { eventsWithOdds: new Set(o.board.engine.eventIdsWithLiveRows()) });
  await o.board.checkpointNow();
  await close(o);
  rmSync(join(dir, 'lock.db'), { force: true });
  rmSync(join(dir, 'lock.pid'), { force: true });
  template = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export class InvariantBroken extends Error {}

function fail(c: Case, message: string): never {
  throw new InvariantBroken(`${message}\n  case: ${JSON.stringify(c)}`);
}

/** Runs one case; throws InvariantBroken when the promise is broken. */
export async function runCase(c: Case): Promise<Outcome> {
  const { board, rows } = tinyBoard();
  const dir = mkdtempSync(join(SCRATCH, 'fault-'));
  const twinDir = mkdtempSync(join(SCRATCH, 'fault-twin-'));
  const clock = new ManualClock(NOW);
  const twinClock = new ManualClock(NOW);
  const storage = new FaultyStorage(null);
  try {
    // both start from a copy of one DATA_DIR holding the tiny board's first checkpoint
    // (loading and checkpointing it once per process, not twice per case)
    const template = await templateDir(board);
    cpSync(template, dir, { recursive: true });
    cpSync(template, twinDir, { recursive: true });
    const live = open(dir, clock, storage, true);
    const twin = open(twinDir, twinClock, undefined, false);
    /** Digest of the twin after each record index it acknowledged. */
    const twinDigests = new Map<number, number>([[0, digest(twin.board)]]);
    if (digest(live.board) !== twinDigests.get(0)) fail(c, 'the two boards differ before any batch');
    if (c.fault.type === 'io') storage.arm({ op: c.fault.op, nth: c.fault.nth, kind: c.fault.kind });
    const rand = mulberry32(c.seed);
    let acknowledged = 0;
    let stopped = false;
    for (let n = 1; n <= c.batches && !stopped; n++) {
      const changes = batchChanges(rand, rows);
      clock.advance(1000);
      twinClock.advance(1000);
      let twinIndex = -1;
      try {
        twinIndex = (await twin.board.ingest.submit(changes)).index;
        twinDigests.set(twinIndex, digest(twin.board));
      } catch (error) {
        if (!(error instanceof IngestError && error.code === 'invalid_batch')) throw error;
      }
      try {
        const result = await live.board.ingest.submit(changes);
        if (result.index !== twinIndex) fail(c, `batch ${n}: acknowledged as record ${result.index}, the twin's is ${twinIndex}`);
        acknowledged = result.index;
        if (digest(live.board) !== twinDigests.get(result.index)) fail(c, `batch ${n}: the board differs from the twin's after record ${result.index}`);
      } catch (error) {
        if (error instanceof InvariantBroken) throw error;
        if (!(error instanceof IngestError)) throw error;
        if (error.code === 'invalid_batch') {
          if (twinIndex !== -1) fail(c, `batch ${n} refused as invalid but the twin took it`);
          continue;
        }
        stopped = true; // the fault: log_unavailable; the run ends here, as a process would restart
      }
      if (!stopped && c.checkpointAfter.includes(n)) {
        try {
          await live.board.checkpointNow();
        } catch {
          // a failed checkpoint keeps the previous state: batches go on
          if (storage.dead) stopped = true;
        }
      }
    }
    await close(live);
    await close(twin);
    const crashed = storage.dead;
    const reached = c.fault.type === 'io' ? storage.fired : damageAtRest(dir, c.fault);

    // the restart
    const lastTwin = Math.max(...twinDigests.keys());
    const check = (restored: DurableBoard, how: Outcome['kind']): Outcome => {
      const index = restored.ingest.appliedIndex;
      const d = digest(restored);
      if (index === acknowledged) {
        if (d !== twinDigests.get(index)) fail(c, `${how}: restored record ${index} (all acknowledged) but the board differs from the acknowledged state`);
        return { kind: reached ? how : 'fault not reached', acknowledged, restoredIndex: index };
      }
      if (index > acknowledged && crashed && index <= lastTwin) {
        if (d !== twinDigests.get(index)) fail(c, `restored an unacknowledged record ${index} after a crash, but the board is not the twin's at it`);
        return { kind: 'crash: unacknowledged record present', acknowledged, restoredIndex: index };
      }
      if (index < acknowledged && c.fault.type === 'cut' && c.fault.target === 'newest segment' && restored.restore.tornTail !== null && how === 'exact') {
        if (d !== twinDigests.get(index)) fail(c, `a cut newest segment restored record ${index}, but not the state acknowledged at it`);
        return { kind: 'torn tail cut (cut at rest)', acknowledged, restoredIndex: index };
      }
      return fail(c, `${how}: the start restored record ${index}, ${acknowledged} were acknowledged`);
    };
    const tryStart = (): DurableBoard | RestoreRefusedError => {
      const clockAgain = new ManualClock(clock.now());
      try {
        const o = open(dir, clockAgain, undefined, true);
        o.persistence.close();
        return o.board;
      } catch (error) {
        if (error instanceof RestoreRefusedError) return error;
        throw new InvariantBroken(`the start failed without a refusal: ${(error as Error).stack}\n  case: ${JSON.stringify(c)}`);
      }
    };
    const first = tryStart();
    if (first instanceof DurableBoard) {
      const outcome = check(first, 'exact');
      await first.close();
      return outcome;
    }
    if (!/\/[^ ]*(wal-|checkpoint-)\d{16}/.test(first.message) && !first.message.includes(dir)) fail(c, `a refusal that names no file: ${first.message}`);
    if (!reached) fail(c, `a start refused with no fault reached: ${first.message}`);
    // repair without the flag loses nothing uncovered
    const plain = repairDataDir(dir);
    const second = tryStart();
    if (second instanceof DurableBoard) {
      const outcome = check(second, 'exact after repair');
      await second.close();
      return outcome;
    }
    if (plain.losesFrom === null) {
      // nothing it may drop would make it start: every checkpoint is damaged
      if (!plain.lines.some((l) => /cannot be rebuilt/.test(l))) fail(c, `refused again after a repair that found nothing to drop: ${second.message}\n${plain.lines.join('\n')}`);
      return { kind: 'refused, nothing to rebuild', acknowledged, restoredIndex: -1 };
    }
    const flagged = repairDataDir(dir, { dropFromRecord: plain.losesFrom });
    if (!flagged.complete) fail(c, `repair with --drop-from-record=${plain.losesFrom} did not complete:\n${flagged.lines.join('\n')}`);
    const third = tryStart();
    if (!(third instanceof DurableBoard)) return fail(c, `refused after repair with its flag: ${third.message}\n${flagged.lines.join('\n')}`);
    const index = third.ingest.appliedIndex;
    if (index !== plain.losesFrom - 1) fail(c, `repair said records from ${plain.losesFrom} go, the start restored record ${index}`);
    if (digest(third) !== twinDigests.get(index)) fail(c, `after repair: restored record ${index} but not the state acknowledged at it`);
    await third.close();
    return { kind: 'refused, repair with flag', acknowledged, restoredIndex: index };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(twinDir, { recursive: true, force: true });
  }
}
