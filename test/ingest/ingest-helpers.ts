// Durable boards for the write-path tests: a DATA_DIR in a fresh temp dir with its own
// SQLite file, the small fixture board loaded and checkpointed on first open (what the
// service will do on a first start), and conversions from engine rows to the changes a
// feed sends.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../engine/clock.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import type { Board, OddsInput } from '../../engine/model.ts';
import { isoMinutes } from '../../engine/timeFormat.ts';
import { DurableBoard, type DurableBoardOptions } from '../../ingest/durableBoard.ts';
import { oddsRowFields } from '../../ingest/engineFeed.ts';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';

export function tempDataDir(prefix = 'ingest-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface OpenedBoard {
  durable: DurableBoard;
  persistence: Persistence;
  close(): Promise<void>;
}

/** Opens DATA_DIR (dir) with its SQLite file dir/odds.db; a fresh one gets `board` loaded and checkpointed. */
export async function openBoard(dir: string, clock: Clock, board: Board, options: Partial<Omit<DurableBoardOptions, 'dataDir' | 'clock' | 'cold'>> = {}): Promise<OpenedBoard> {
  const persistence = openPersistence({ path: join(dir, 'odds.db'), env: {} });
  const durable = DurableBoard.open({ dataDir: dir, clock, cold: persistence, checkpointIntervalMs: 0, env: {}, warn: () => {}, ...options });
  if (durable.fresh) {
    loadBoard(durable.engine, board);
    persistence.loadCold(board, { eventsWithOdds: new Set(durable.engine.eventIdsWithLiveRows()) });
    await durable.checkpointNow();
  }
  return {
    durable,
    persistence,
    async close() {
      await durable.close();
      persistence.close();
    },
  };
}

/**
 * An engine row as an outside feed sends it in an odds change: the served /odds fields
 * (eventStartTime as the ISO text /odds shows, no selectionId) plus teamId.
 */
export function oddsChange(row: OddsInput): Record<string, unknown> {
  const { selectionId: _internal, ...fields } = oddsRowFields(row);
  return { op: 'odds', row: { ...fields, eventStartTime: isoMinutes(row.eventStartTime) } };
}
