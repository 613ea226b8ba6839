// Time renderings of the cold records, kept in one place.

/** Event startTime: minute precision ending in Z, e.g. '2026-11-21T18:00Z'. */
export function formatEventStartTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16) + 'Z';
}

/** ISO-8601 UTC with milliseconds, e.g. '2026-11-21T18:04:05.123Z'. */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString();
}

/** Usage month key, 'YYYY-MM' in UTC. */
export function monthKey(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** Epoch ms of the first instant of the UTC month after the one holding ms. */
export function startOfNextMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Epoch ms of the first instant of the UTC minute after the one holding ms. */
export function startOfNextMinute(ms: number): number {
  return Math.floor(ms / 60_000) * 60_000 + 60_000;
}
