// The small market the arbitrage property tests draw from: four books, a two-way
// moneyline, a two-way total and a three-way moneyline, and quotes priced anywhere from
// a book's own negative margin to a healthy one.
import fc from 'fast-check';
import { decimalToAmerican, type OddsInput } from '../../engine/model.ts';
import { row } from './signals-harness.ts';

export const BOOKS = ['betrivers', 'draftkings', 'fanduel', 'pinnacle'];
export const GROUPS: { market: string; sides: string[]; line: number | null }[] = [
  { market: 'MONEYLINE', sides: ['HOME', 'AWAY'], line: null },
  { market: 'TOTAL', sides: ['OVER', 'UNDER'], line: 220.5 },
  { market: 'MONEYLINE_3_WAY', sides: ['HOME', 'DRAW', 'AWAY'], line: null },
];

/** Implied probability per quote: from a book's own negative margin to a healthy one. */
export const implied = fc.double({ min: 0.08, max: 0.9, noNaN: true });

/** One book's quote on one side of one of GROUPS. */
export interface GroupQuote {
  group: number;
  book: number;
  side: number;
}

/** The odds row of `q` at implied probability `p`, seen at `now`. */
export function groupQuoteRow(q: GroupQuote, p: number, now: number): OddsInput {
  const g = GROUPS[q.group];
  const side = g.sides[q.side] as OddsInput['side'];
  return row({ sportsbook: BOOKS[q.book], side, market: g.market, line: g.line, teamSide: side === 'HOME' || side === 'AWAY' ? side : 'NONE', priceAmerican: decimalToAmerican(1 / p), updated: now });
}
