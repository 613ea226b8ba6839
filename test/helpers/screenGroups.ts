// The little market the screen property tests draw from (screens.property.test.ts and
// signal-stream-changes.property.test.ts): five books, two of them sharp with weights,
// and seven market groups of two or three sides, spreads and totals at neighbouring
// lines so that middles can form.
import type { WeightedBook } from '../../engine/signals/screenRecords.ts';

export const BOOKS = ['pinnacle', 'circa', 'draftkings', 'fanduel', 'betrivers'];
export const SHARP: WeightedBook[] = [{ sportsbook: 'pinnacle', weight: 2 }, { sportsbook: 'circa', weight: 1 }];
export const STALENESS_MS = 6_000;
/** Each group: market, its sides, and the line each side is quoted at. */
export const GROUPS: { market: string; sides: string[]; lines: (number | null)[] }[] = [
  { market: 'MONEYLINE', sides: ['HOME', 'AWAY'], lines: [null, null] },
  { market: 'SPREAD', sides: ['HOME', 'AWAY'], lines: [-3.5, 3.5] },
  { market: 'SPREAD', sides: ['HOME', 'AWAY'], lines: [-4.5, 4.5] },
  { market: 'SPREAD', sides: ['HOME', 'AWAY'], lines: [-2.5, 2.5] },
  { market: 'TOTAL', sides: ['OVER', 'UNDER'], lines: [220.5, 220.5] },
  { market: 'TOTAL', sides: ['OVER', 'UNDER'], lines: [222.5, 222.5] },
  { market: 'MONEYLINE_3_WAY', sides: ['HOME', 'DRAW', 'AWAY'], lines: [null, null, null] },
];
