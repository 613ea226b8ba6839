// The process's engine change listeners, in one list. The engine calls its listeners
// in the order they subscribed, and a listener may read state another one keeps in
// step, so they are stopped in the reverse of that order: the last one built is the
// first one stopped, and none outlives one it was built after.
import type { ChangeListener, OddsEngine } from '../engine/engine.ts';

interface RunningListener {
  /** What the listener is, for the error of a close that fails. */
  readonly name: string;
  readonly stop: () => void;
}

export class EngineListeners {
  private readonly running: RunningListener[] = [];
  private closed = false;

  constructor(private readonly engine: OddsEngine) {}

  /** Subscribes listener here; close() unsubscribes it, then runs finish (a last flush, a timer). */
  subscribe<T extends ChangeListener>(name: string, listener: T, finish?: (listener: T) => void): T {
    const unsubscribe = this.engine.subscribe(listener);
    this.running.push({
      name,
      stop: () => {
        unsubscribe();
        finish?.(listener);
      },
    });
    return listener;
  }

  /**
   * Takes a listener that subscribed itself when it was built (the signal books and the
   * snapshot do, so their own tests can build them alone); close() calls its close(),
   * which unsubscribes it.
   */
  own<T extends ChangeListener & { close(): void }>(name: string, listener: T): T {
    this.running.push({ name, stop: () => listener.close() });
    return listener;
  }

  /** Stops every listener, newest first, once. A failing close does not keep the others running: the first failure is thrown after all were stopped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    let failure: Error | null = null;
    for (let i = this.running.length - 1; i >= 0; i--) {
      const { name, stop } = this.running[i]!;
      try {
        stop();
      } catch (error) {
        failure ??= new Error(`closing the ${name} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
    if (failure !== null) throw failure;
  }
}
