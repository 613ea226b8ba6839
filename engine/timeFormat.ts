// Every text rendering of an instant the service writes, in one place. Each function is
// named after the exact text it returns (all in UTC); the OpenAPI description states
// which field carries which.

/** '2026-11-21T18:04:05.123Z': ISO-8601 with milliseconds (updated, asOf, meta.updated). */
export function isoMillis(ms: number): string {
  const slot = (ms % CACHE_SLOTS) | 0;
  if (slot >= 0 && cachedMs[slot] === ms) return cachedText[slot];
  const text = new Date(ms).toISOString();
  if (slot >= 0) {
    cachedMs[slot] = ms;
    cachedText[slot] = text;
  }
  return text;
}

// isoMillis runs on the tick path (an arbitrage's legs are rebuilt per tick) and per row
// rendered, and the instants repeat a lot (one clock reading per applied batch), while
// toISOString costs ~1 us: a small direct-mapped cache of recent instants turns most of
// those calls into a lookup.
const CACHE_SLOTS = 256;
const cachedMs = new Float64Array(CACHE_SLOTS).fill(Number.NaN);
const cachedText: string[] = new Array<string>(CACHE_SLOTS).fill('');

/** '2026-11-21T18:04:05Z': whole seconds (the keys command line's listing). */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

/** '2026-11-21T18:04Z': minutes with the zone (an event's startTime). */
export function isoMinutesZ(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16) + 'Z';
}

/** '2026-11-21T18:04': minutes without a zone (an odds row's eventStartTime). */
export function isoMinutes(ms: number): string {
  const slot = (ms / 60_000) & (MINUTE_SLOTS - 1);
  if (slot >= 0 && minuteMs[slot] === ms) return minuteText[slot];
  const text = new Date(ms).toISOString().slice(0, 16);
  if (slot >= 0) {
    minuteMs[slot] = ms;
    minuteText[slot] = text;
  }
  return text;
}

// isoMinutes runs per event opened in a snapshot piece and per odds row rendered (2.4%
// of the main thread while the large board's snapshot with history was first built),
// and events start on few distinct minutes: the same direct-mapped cache as isoMillis'.
const MINUTE_SLOTS = 256;
const minuteMs = new Float64Array(MINUTE_SLOTS).fill(Number.NaN);
const minuteText: string[] = new Array<string>(MINUTE_SLOTS).fill('');

/** '2026-11-21': the calendar day (a box score's date). */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** '20261121': the calendar day without separators (the day inside an event id). */
export function yyyymmdd(ms: number): string {
  return isoDate(ms).replace(/-/g, '');
}

/** '2026-11': the calendar month (a usage month). */
export function isoMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}
