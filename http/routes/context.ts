// What every route module is built from. Route modules are called once at start-up:
// whatever they derive from the engine (snapshot pieces, signal books) they create
// then, and register its teardown with onClose.
import type { Clock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import type { Persistence } from '../../persistence/persistence.ts';

export interface AppContext {
  engine: OddsEngine;
  persistence: Persistence;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  /**
   * Writes the engine's pending event status / has-odds changes to SQLite now (the
   * write-behind otherwise runs every 250 ms). Routes that read those columns call it
   * first; a no-op when nothing changed.
   */
  syncEvents(): void;
  onClose(teardown: () => void): void;
}
