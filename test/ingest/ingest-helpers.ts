// Durable boards for the write-path tests: a DATA_DIR in a fresh temp dir with its own
// SQLite file, the small fixture board loaded and checkpointed on first open (what the
// service will do on a first start), and conversions from engine rows to the changes a
// feed sends.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../engine/clock.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { oddsId, type Board, type OddsInput } from '../../engine/model.ts';
import { isoMinutes } from '../../engine/timeFormat.ts';
import { DurableBoard } from '../../ingest/durableBoard.ts';
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
export async function openBoard(dir: string, clock: Clock, board: Board, options: { checkpointLogBytes?: number; fsync?: boolean; checkpointCopyStepBytes?: number } = {}): Promise<OpenedBoard> {
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

/** An engine row as a feed sends it in an odds change (the /odds row fields plus teamId). */
export function oddsChange(row: OddsInput): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: oddsId(row),
    eventId: row.eventId,
    sportsbook: row.sportsbook,
    league: row.league,
    market: row.market,
    marketSubtype: row.marketSubtype,
    period: row.period,
    selection: row.selection,
    side: row.side,
    teamSide: row.teamSide,
    teamName: row.teamName,
    suspended: row.suspended,
    eventStartTime: isoMinutes(row.eventStartTime),
    teamId: row.teamId,
  };
  if (row.priceAmerican !== null) out.priceAmerican = row.priceAmerican;
  if (row.dfsMultiplier !== null) out.dfsMultiplier = row.dfsMultiplier;
  if (row.line !== null) out.line = row.line;
  if (row.playerId !== null) {
    out.playerId = row.playerId;
    out.playerName = row.playerName;
  }
  if (row.marketScope !== null) out.marketScope = row.marketScope;
  if (row.segment !== null) out.segment = row.segment;
  return { op: 'odds', row: out };
}
