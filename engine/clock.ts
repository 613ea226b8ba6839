// One clock for every "now" in the process (windows, seasons, staleness). With NOW set the clock is
// frozen at that instant and only moves when something (the simulator, a test)
// advances it, so runs are reproducible; without NOW it follows the system clock.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
}

/** A clock that stands still until advanced: simulated time. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: number) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    if (ms > 0) this.current += ms;
  }
  set(ms: number): void {
    if (ms > this.current) this.current = ms;
  }
}

/** Parses NOW (ISO-8601 or epoch millis). */
export function parseInstant(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  if (!env.NOW) return new SystemClock();
  const start = parseInstant(env.NOW);
  if (start === null) throw new Error(`NOW is not an ISO-8601 instant or epoch millis: ${env.NOW}`);
  return new ManualClock(start);
}
