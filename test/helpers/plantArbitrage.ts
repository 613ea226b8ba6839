// Puts an arbitrage on the board on purpose, for tests whose subject is what happens to
// arbitrage (replays, times) rather than whether the simulator happens to open one at
// that instant: one book's OVER on a game total repriced to +400 (implied 0.2) while
// another book prices the UNDER at the same line, so the pair sums far below 1.
import type { OddsEngine } from '../../engine/engine.ts';
import { NO_PRICE, SIDE_OVER, SIDE_UNDER } from '../../engine/oddsStore.ts';

/** Plants the arbitrage on the nth eligible OVER row (slot order) and returns that row's id. */
export function plantArbitrage(engine: OddsEngine, nth = 0): string {
  const s = engine.store;
  const quotable = (slot: number) =>
    engine.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && s.suspended[slot] === 0 && engine.sources.kindOf(s.books.get(s.book[slot])) !== 'dfs';
  let eligible = 0;
  for (let slot = 0; slot < s.size; slot++) {
    if (s.side[slot] !== SIDE_OVER || !quotable(slot) || s.markets.get(s.market[slot]) !== 'TOTAL') continue;
    const list = engine.indexes.byEvent[s.event[slot]];
    let under = -1;
    for (let i = 0; list !== undefined && i < list.length && under < 0; i++) {
      const at = list.items[i];
      if (s.side[at] === SIDE_UNDER && s.book[at] !== s.book[slot] && s.subtype[at] === s.subtype[slot] && s.period[at] === s.period[slot] && s.line[at] === s.line[slot] && quotable(at)) under = at;
    }
    if (under < 0 || eligible++ < nth) continue;
    engine.apply([{ op: 'price', slot, priceAmerican: 400, suspended: false }]);
    return engine.idOf(slot);
  }
  throw new Error('no game total with two books to plant an arbitrage on');
}
