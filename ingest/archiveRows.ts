// The tick archive's rows of one log record (persistence/archive/archiveSchema.ts):
// the record's changes as the write path logged them, with what the log does not
// repeat on every tick (the league, market, selection name, line and event start)
// read from the board when the record is archived, seconds after it was applied.
// Changes that are not about odds rows or event status (sources, events' other
// fields, teams, players, seasons, box scores) are not archived; their places in the
// record are skipped, so a row's pos is always its change's place in the record.

import type { OddsEngine } from '../engine/engine.ts';
import { NONE, SLOT_TOMBSTONE } from '../engine/oddsStore.ts';
import type { ArchiveRow } from '../persistence/archive/archiveSchema.ts';
import type { ArchiveSource, Compaction, TickArchive } from '../persistence/archive/tickArchive.ts';
import type { Storage } from '../persistence/log/storage.ts';
import type { DurableBoard } from './durableBoard.ts';
import { decodeRecord } from './record.ts';

export class RecordArchiveSource implements ArchiveSource {
  constructor(private readonly engine: OddsEngine) {}

  rowsOf(index: number, payload: Uint8Array, out: ArchiveRow[]): void {
    const record = decodeRecord(payload);
    const changes = record.changes;
    for (let pos = 0; pos < changes.length; pos++) {
      const change = changes[pos];
      switch (change.op) {
        case 'priceById': {
          const row = this.rowOf(index, pos, record.time, 'price', change.id);
          row.price_american = change.priceAmerican ?? null;
          row.dfs_multiplier = change.dfsMultiplier ?? null;
          row.suspended = change.suspended ?? null;
          out.push(row);
          break;
        }
        case 'remove': {
          const row = this.rowOf(index, pos, record.time, 'remove', change.id);
          row.removed_rows = this.removedRow(change.id, record.time);
          out.push(row);
          break;
        }
        case 'upsert': {
          const r = change.row;
          out.push({
            seq: index,
            pos,
            time_ms: record.time,
            kind: 'upsert',
            odds_id: `${r.eventId}:${r.sportsbook}:${r.marketSubtype}:${r.selectionId}`,
            event_id: r.eventId,
            league: r.league,
            book: r.sportsbook,
            market: r.market,
            market_subtype: r.marketSubtype,
            selection_id: r.selectionId,
            selection: r.selection,
            line: r.line,
            price_american: r.priceAmerican,
            dfs_multiplier: r.dfsMultiplier,
            suspended: r.suspended,
            event_status: null,
            event_start_ms: r.eventStartTime,
            removed_rows: null,
          });
          break;
        }
        case 'status': {
          const event = this.engine.event(change.eventId);
          out.push({
            seq: index,
            pos,
            time_ms: record.time,
            kind: 'status',
            odds_id: null,
            event_id: change.eventId,
            league: event?.league ?? null,
            book: null,
            market: null,
            market_subtype: null,
            selection_id: null,
            selection: null,
            line: null,
            price_american: null,
            dfs_multiplier: null,
            suspended: null,
            event_status: change.status,
            event_start_ms: event?.startTime ?? null,
            removed_rows: change.status === 'final' || change.status === 'cancelled' ? this.droppedRows(change.eventId, record.time) : null,
          });
          break;
        }
        default:
          break;
      }
    }
  }

  private removedRow(id: string, time: number): string | null {
    const engine = this.engine;
    const slot = engine.slotOf(id);
    if (slot < 0) return engine.tombstoneHorizon() > time ? null : '[]';
    // a tombstone of this removal or of a later one (the later one is what the window answers with)
    if (engine.store.state[slot] === SLOT_TOMBSTONE && engine.store.updated[slot] >= time) return `[${tombstoneJson(engine, slot)}]`;
    // live again (revived since): the revival is a later change of the row
    return '[]';
  }

  /** The rows an event's final or cancelled status dropped: its tombstones removed at or after the record's time. */
  private droppedRows(eventId: string, time: number): string | null {
    const engine = this.engine;
    if (engine.tombstoneHorizon() > time) return null;
    const store = engine.store;
    const event = store.events.lookup(eventId);
    if (event === NONE) return '[]';
    const parts: string[] = [];
    const tombstones = engine.indexes.tombstones;
    for (let i = 0; i < tombstones.length; i++) {
      const slot = tombstones.items[i];
      if (store.event[slot] === event && store.updated[slot] >= time) parts.push(tombstoneJson(engine, slot));
    }
    return `[${parts.join(',')}]`;
  }

  /** A row about odds id `id`, its descriptive fields read from the board (the row, a tombstone, or only its event). */
  private rowOf(seq: number, pos: number, time: number, kind: 'price' | 'remove', id: string): ArchiveRow {
    const a = id.indexOf(':');
    const b = id.indexOf(':', a + 1);
    const c = id.indexOf(':', b + 1);
    const eventId = id.slice(0, a);
    const row: ArchiveRow = {
      seq,
      pos,
      time_ms: time,
      kind,
      odds_id: id,
      event_id: eventId,
      league: null,
      book: id.slice(a + 1, b),
      market: null,
      market_subtype: id.slice(b + 1, c),
      selection_id: id.slice(c + 1),
      selection: null,
      line: null,
      price_american: null,
      dfs_multiplier: null,
      suspended: null,
      event_status: null,
      event_start_ms: null,
      removed_rows: null,
    };
    const engine = this.engine;
    const slot = engine.slotOf(id);
    if (slot >= 0) {
      const store = engine.store;
      row.league = store.leagues.get(store.league[slot]);
      row.market = store.markets.get(store.market[slot]);
      row.selection = store.labels.get(store.selection[slot]);
      const line = store.line[slot];
      row.line = Number.isNaN(line) ? null : line;
      row.event_start_ms = store.eventStartTime[slot];
    } else {
      const event = engine.event(eventId);
      if (event !== undefined) {
        row.league = event.league;
        row.event_start_ms = event.startTime;
      }
    }
    return row;
  }
}

/**
 * What a removal took off the board, for the replay window (ingest/replayWindow.ts): the
 * tombstone's row as the board holds it when the record is archived, seconds after
 * the removal (a tombstone stays at least 10 minutes). '[]' when the removal took
 * nothing (the id was not live) and null when the board may have forgotten it: it no
 * longer holds the id and has recycled tombstones removed at or after the record's time
 * (an archive catching up on an old log); the replay window answers nothing across a null.
 */
function tombstoneJson(engine: OddsEngine, slot: number): string {
  // rowInput carries every input field, `updated` (the removal time) included
  return JSON.stringify(engine.store.rowInput(slot));
}

/** The tick archive's settings (ARCHIVE_DIR, ARCHIVE_RETENTION_DAYS, ARCHIVE_INTERVAL_MS). */
export interface ArchiveSettings {
  dir: string;
  retentionDays: number;
  intervalMs: number;
}

/**
 * Opens the tick archive on a durable board's log: from here every durable record is
 * handed to it and the log keeps what it lacks; a first flush starts at once and reads
 * what the log holds after the last archived record.
 */
export async function attachTickArchive(durable: DurableBoard, settings: ArchiveSettings, options: { now: () => number; warn: (line: string) => void; fsync: boolean; storage?: Storage; compaction?: Partial<Compaction> }): Promise<TickArchive> {
  // DuckDB (~180 modules and a native library) is loaded only when ARCHIVE_DIR asks for the archive
  const { TickArchive } = await import('../persistence/archive/tickArchive.ts');
  const archive = await TickArchive.open({
    dir: settings.dir,
    retentionDays: settings.retentionDays,
    intervalMs: settings.intervalMs,
    fsync: options.fsync,
    storage: options.storage,
    compaction: options.compaction,
    now: options.now,
    warn: options.warn,
    source: new RecordArchiveSource(durable.engine),
    log: durable.archiveLog(),
  });
  durable.log.onDurable = (index, payload) => archive.take(index, payload);
  void archive.flush().catch(() => {});
  return archive;
}
