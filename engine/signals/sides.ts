// Integer codes for sides and for the outcome set a market group settles on, so the
// per-update loops compare small ints instead of strings.

// The codes are the side column's (the index in engine/model.ts's SIDES).
import { SIDES } from '../model.ts';
import { SIDE_OVER, SIDE_UNDER } from '../oddsStore.ts';

export { SIDE_OVER, SIDE_UNDER };
const SIDE_HOME = SIDES.indexOf('HOME');
const SIDE_AWAY = SIDES.indexOf('AWAY');
const SIDE_DRAW = SIDES.indexOf('DRAW');
const SIDE_YES = SIDES.indexOf('YES');
export const SIDE_NAMES = SIDES;
const SIDE_COUNT = SIDE_NAMES.length;

/** -1 for anything that is not an odds-row side (HOME, AWAY, DRAW, OVER, UNDER, YES). */
export function sideCode(side: string): number {
  switch (side) {
    case 'HOME': return SIDE_HOME;
    case 'AWAY': return SIDE_AWAY;
    case 'DRAW': return SIDE_DRAW;
    case 'OVER': return SIDE_OVER;
    case 'UNDER': return SIDE_UNDER;
    case 'YES': return SIDE_YES;
    default: return -1;
  }
}

/** The complete set of outcomes a group needs before it can be devigged or arbed. */
export const OUTCOMES_NONE = 0;
export const OUTCOMES_HOME_AWAY = 1;
export const OUTCOMES_OVER_UNDER = 2;
export const OUTCOMES_HOME_DRAW_AWAY = 3;

export const OUTCOME_COUNT = new Uint8Array([0, 2, 2, 3]);

/** OUTCOME_SIDES[set][i]: the side code of outcome i, in leg order. */
const OUTCOME_SIDES: readonly (readonly number[])[] = [
  [],
  [SIDE_HOME, SIDE_AWAY],
  [SIDE_OVER, SIDE_UNDER],
  [SIDE_HOME, SIDE_DRAW, SIDE_AWAY],
];

/** OUTCOME_INDEX[set * SIDE_COUNT + side]: position of a side in its set's legs, -1 if it takes no part. */
const OUTCOME_INDEX = new Int8Array(4 * SIDE_COUNT).fill(-1);
for (let set = 1; set < OUTCOME_SIDES.length; set++) {
  OUTCOME_SIDES[set].forEach((side, i) => { OUTCOME_INDEX[set * SIDE_COUNT + side] = i; });
}

export function outcomeIndex(set: number, side: number): number {
  return side < 0 ? -1 : OUTCOME_INDEX[set * SIDE_COUNT + side];
}

/**
 * Which outcome set a market settles on, decided by the market (not by whichever
 * sides happen to be quoted now), so a three-way market whose DRAW is momentarily
 * suspended is never mistaken for a two-way one.
 */
export function outcomeSetOf(market: string, side: string): number {
  if (side === 'DRAW' || market.includes('3_WAY')) return OUTCOMES_HOME_DRAW_AWAY;
  if (side === 'HOME' || side === 'AWAY') return OUTCOMES_HOME_AWAY;
  if (side === 'OVER' || side === 'UNDER') return OUTCOMES_OVER_UNDER;
  return OUTCOMES_NONE;
}
