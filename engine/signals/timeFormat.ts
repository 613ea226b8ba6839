// Record time fields in the board's formats (decisions A1).

/** 'YYYY-MM-DDTHH:mm' UTC: an odds row's eventStartTime. */
export function formatEventStart(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

/** ISO-8601 UTC with milliseconds and Z. */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString();
}
