// Keyset pages: queries fetch limit + 1 rows, and the extra row only says a next
// page exists; the next key is the last row actually returned.

import type { Page } from './rows.ts';

/** For lists keyed by their first column (an id). */
export function pageOf<Raw extends unknown[], Row>(raw: Raw[], limit: number, map: (r: Raw) => Row): Page<Row, string> {
  const more = raw.length > limit;
  const count = more ? limit : raw.length;
  const rows = new Array<Row>(count);
  for (let i = 0; i < count; i++) rows[i] = map(raw[i]!);
  return { rows, next: more ? (raw[count - 1]![0] as string) : null };
}
