// What every way of starting a board shares (the file log in durableStart.ts, JetStream in
// replicatedStart.ts, no log in servedBoard.ts): the options they are given, the start
// modes, and the fixture or reference board with its progress bars.

import type { ArchiveSettings } from '../ingest/archiveRows.ts';
import { leagueCatalog } from '../engine/calendar.ts';
import type { Clock } from '../engine/clock.ts';
import type { OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import { SOURCES, type Board, type BoardOptions, type BoardSize } from '../engine/model.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import type { AnyRoute } from '../http/router.ts';
import type { TransportChoice } from '../http/transport/transport.ts';
import type { StepProgress } from '../ingest/durableBoard.ts';
import { startProgress } from './progress.ts';
import type { StartTimeline } from './startTimeline.ts';

/** What to load when DATA_DIR is empty: fixture board options, a generated board, or 'none'. */
export type StartBoard = BoardOptions | Board | 'none';

export type StartMode = 'restored' | 'fixture' | 'empty';

/** What every way of starting a board is given (file log, JetStream, or no log). */
export interface BoardStartOptions {
  clock: Clock;
  board: StartBoard;
  /** INGEST_HOST, INGEST_PORT, INGEST_TOKEN, INGEST_MAX_BATCH_BYTES, WAL_FSYNC, CHECKPOINT_INTERVAL_MS, CHECKPOINT_LOG_BYTES. */
  env: NodeJS.ProcessEnv;
  /** Overrides INGEST_PORT (0: ephemeral). */
  ingestPort?: number;
  ingestHost?: string;
  transport?: TransportChoice;
  log: (line: string) => void;
  /** Served on the ingest listener without the token (health, readiness, metrics). */
  operationsRoutes?: readonly AnyRoute[];
  /** Served on the ingest listener behind its token (the webhook admin API). */
  adminRoutes?: readonly AnyRoute[];
  /** Print the progress of generating, loading or restoring the board (service/progress.ts). */
  progress?: boolean;
  /** The tick archive (docs/archive.md); absent: none. */
  archive?: ArchiveSettings;
  /**
   * Called with the engine once it holds a restored board (a checkpoint, or a log to
   * replay onto an empty one), before the log after it replays: what follows the engine
   * and keeps state the board does not determine (the steam detector) subscribes here,
   * so it sees every replayed batch as the writer did. Not called for a fresh start
   * (nothing restored: the caller builds such listeners once the board is loaded).
   */
  restored?: (engine: OddsEngine) => void;
  /** Where the start's phases are timed (the ready line's `phases`); absent: not timed. */
  timeline?: StartTimeline;
}
export function isBoard(value: StartBoard): value is Board {
  return typeof value === 'object' && typeof (value as Board).forEachOdds === 'function';
}
/**
 * A board with the reference data only (leagues and sources): what BOARD=none loads,
 * and what a restored start reports as its board (nothing is generated). Its size is
 * 'none', so the cold loader records it under a key no fixture board shares.
 */
export function referenceBoard(now: number, seed = 0): Board {
  return {
    options: { size: 'none' as BoardSize, seed, now },
    leagues: leagueCatalog(),
    seasons: [],
    sources: SOURCES,
    venues: [],
    teams: [],
    players: [],
    events: [],
    teamBox: [],
    playerBox: [],
    oddsCount: 0,
    forEachOdds: () => {},
  };
}

/** The progress of a step on stderr, when the caller asked for it. */
export function stepProgress(enabled: boolean | undefined): StepProgress | undefined {
  return enabled === true ? (label, total, unit) => startProgress(label, total, { unit }) : undefined;
}

/** The fixture board for `start`, generated (with its progress) unless it is one already. */
export function fixtureBoard(start: StartBoard, now: number, progress: boolean | undefined): Board {
  if (start === 'none') return referenceBoard(now);
  if (isBoard(start)) return start;
  const step = stepProgress(progress)?.(`generating the ${start.size} board`, null, 'rows');
  const board = generateBoard(start);
  step?.update(board.oddsCount);
  step?.finish();
  return board;
}

/** Loads the board into the engine, its rows' one pass reported as a progress bar when asked. */
export function loadWithProgress(engine: OddsEngine, board: Board, progress: boolean | undefined): void {
  if (progress !== true || board.oddsCount === 0) {
    loadBoard(engine, board);
    return;
  }
  loadBoard(engine, {
    ...board,
    forEachOdds(visit) {
      const bar = startProgress('loading odds rows', board.oddsCount);
      let done = 0;
      board.forEachOdds((row, history) => {
        visit(row, history);
        bar.update(++done);
      });
      bar.finish();
    },
  });
}
