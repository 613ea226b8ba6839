// Record time fields in the same formats as the odds rows they come from.

/** 'YYYY-MM-DDTHH:mm' UTC: an odds row's eventStartTime. */
export function formatEventStart(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

// Records are rebuilt on the tick path (an arbitrage's legs), and the times they carry
// repeat a lot (one clock reading per applied batch), while toISOString costs ~1 us:
// a small direct-mapped cache of recent instants keeps most of those calls to a lookup.
const CACHE_SLOTS = 256;
const cachedMs = new Float64Array(CACHE_SLOTS).fill(Number.NaN);
const cachedText: string[] = new Array<string>(CACHE_SLOTS).fill('');

/** ISO-8601 UTC with milliseconds and Z. */
export function formatInstant(ms: number): string {
  const slot = (ms % CACHE_SLOTS) | 0;
  if (slot >= 0 && cachedMs[slot] === ms) return cachedText[slot];
  const text = new Date(ms).toISOString();
  if (slot >= 0) {
    cachedMs[slot] = ms;
    cachedText[slot] = text;
  }
  return text;
}
