// The /events time window [starts_after, starts_before) defaults to [now, now + 14 days)
// (see the OpenAPI description of /events), so its result moves with the clock, but only when a bound
// crosses an event start. EventStarts keeps every start sorted and says, for an
// instant, how many starts lie below each bound (equal counts = the same events in the
// window: the cache validity) and the earliest instant with those counts (the anchor:
// the window is evaluated at it, so the body, its cursor and meta.updated depend on
// the window's contents only, not on the millisecond of the request).
import { DEFAULT_EVENT_WINDOW_MS } from '../../persistence/eventsRepository.ts';

export const WINDOW_MS = DEFAULT_EVENT_WINDOW_MS;

export class EventStarts {
  private times: Float64Array = new Float64Array(0);
  private loadedAt = Number.NaN;

  /**
   * @param load every event start, ascending
   * @param version moves whenever the events data may have changed
   */
  constructor(
    private readonly load: () => Float64Array,
    private readonly version: () => number,
  ) {}

  /** Starts strictly before t. */
  countBefore(t: number): number {
    this.refresh();
    const times = this.times;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The earliest instant <= now at which a window whose defaulted bounds follow the
   * clock (lower: starts_after = t; upper: starts_before = t + WINDOW_MS) holds the
   * same events as at now. Starts are whole milliseconds.
   */
  anchor(now: number, lower: boolean, upper: boolean): number {
    let anchor = 0;
    if (lower) {
      const below = this.countBefore(now);
      if (below > 0) anchor = Math.max(anchor, this.times[below - 1]! + 1);
    }
    if (upper) {
      const below = this.countBefore(now + WINDOW_MS);
      if (below > 0) anchor = Math.max(anchor, this.times[below - 1]! + 1 - WINDOW_MS);
    }
    return Math.min(anchor, now);
  }

  private refresh(): void {
    const version = this.version();
    if (version === this.loadedAt) return;
    this.times = this.load();
    this.loadedAt = version;
  }
}
