// What the route modules are built from: the parts the composition root
// (service/app.ts) built and started, the engine's listeners included. Route modules
// are called once at start-up and only read these: they build no listener of their
// own and stop nothing.
import type { BoardMembership } from '../../engine/boardMembership.ts';
import type { Clock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import type { EngineSignals } from '../../engine/signals/engineSignals.ts';
import type { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import type { KeyChecker } from '../../persistence/keyCheck.ts';
import type { Persistence } from '../../persistence/persistence.ts';
import type { ReplaySource } from '../../engine/archivedTombstones.ts';
import type { TickArchive } from '../../persistence/archive/tickArchive.ts';
import type { CursorCodec } from '../cursor.ts';

export interface Services {
  engine: OddsEngine;
  persistence: Persistence;
  clock: Clock;
  /** Counts API keys and reports their usage (the fleet's counts on a replicated node). */
  keyChecker: KeyChecker;
  /** Signs and checks the keyset cursors of every list (CURSOR_SECRET). */
  cursors: CursorCodec;
  /** Version and time of the last row insert or remove (the catalog counts' cache validity). */
  membership: BoardMembership;
  /** The /snapshot body, already built once for the variant without history. */
  snapshot: BoardSnapshot;
  /** The edge and arbitrage books, following the engine. */
  signals: EngineSignals;
  /**
   * Writes the engine's pending event status / has-odds changes to SQLite now (the
   * write-behind otherwise runs every 250 ms). Routes that read those columns call it
   * first; a no-op when nothing changed.
   */
  syncEvents(): void;
  /** The tick archive (ARCHIVE_DIR), or null without one: its routes answer 503 archive_unavailable. */
  archive: TickArchive | null;
  /** The replay window over the archive (REPLAY_WINDOW_HOURS), or null: /odds/updated answers a since past the tombstone horizon with the re-bootstrap note. */
  replay: ReplaySource | null;
}
