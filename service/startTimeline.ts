// The phases of a start and how long each took: what the ready line's `phases` field
// shows (service/main.ts), so an operator sees where a slow start spent its time
// (restoring the checkpoint, replaying the log, loading the fixture board, listening...).
// Work the start leaves to the background once the port listens (the snapshot's first
// version, the signal books) is timed too, and reported when it finishes.
//
//   const timeline = new StartTimeline();
//   ... timeline.mark('restore');     // the time since the previous mark is the restore's
//   timeline.phases()                  // { restore: 2410, ... } in ms, in start order

export class StartTimeline {
  private readonly entries: [phase: string, ms: number][] = [];
  private last: number;
  readonly started: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.started = now();
    this.last = this.started;
  }

  /** Ends the phase named: the time since the previous mark (or the start) is its. */
  mark(phase: string): void {
    const now = this.now();
    this.add(phase, now - this.last);
    this.last = now;
  }

  /** Records a phase timed elsewhere (a restore's own report); the next mark starts now. */
  add(phase: string, ms: number): void {
    const existing = this.entries.find(([name]) => name === phase);
    if (existing !== undefined) existing[1] += ms;
    else this.entries.push([phase, ms]);
  }

  /** Restarts the current phase's clock without recording anything (time that belongs to no phase of ours). */
  skip(): void {
    this.last = this.now();
  }

  /** Milliseconds since the start. */
  get totalMs(): number {
    return this.now() - this.started;
  }

  /** Each phase's milliseconds (rounded), in the order they ended. */
  phases(): Record<string, number> {
    return Object.fromEntries(this.entries.map(([phase, ms]) => [phase, Math.round(ms)]));
  }

  /** "restore 2410 ms, snapshot 12 ms, ...": the phases as the ready line's text says them. */
  describe(): string {
    return this.entries.map(([phase, ms]) => `${phase} ${Math.round(ms)} ms`).join(', ');
  }
}
