// The UTC periods a key's usage is counted in: the rate-limit minute and the month.

/** Epoch ms of the first instant of the UTC month after the one holding ms. */
export function startOfNextMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Epoch ms of the first instant of the UTC minute after the one holding ms. */
export function startOfNextMinute(ms: number): number {
  return Math.floor(ms / 60_000) * 60_000 + 60_000;
}
