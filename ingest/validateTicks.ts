// validate.ts's check of a price tick on a settled board (no pending batch adds,
// removes or closes a row, or adds a source), run over a TickBatch's typed arrays:
// each id is looked up in TickSlots where its bytes lie in the body, else checked for
// the id form and looked up in the engine (then noted); its row must be live and its event neither final nor cancelled;
// the price must suit the row's source (a sportsbook's priceAmerican an integer with
// 100 <= |price| < 2^30, a DFS source's dfsMultiplier within 0.5..2, or no price and
// a suspended flag). What passes is what validate.ts passes, normalized the same way
// (a DFS row's tick says priceAmerican null). It answers only yes or no: on no the
// write path runs the general validator over the body, which names every bad change.

import { TICK_AMERICAN, TICK_AMERICAN_NULL, TICK_DFS, TICK_HAS_SUSPENDED, type OddsEngine } from '../engine/engine.ts';
import { STATUS_CANCELLED, STATUS_FINAL } from '../engine/eventTable.ts';
import type { SourceKind } from '../engine/model.ts';
import { SLOT_LIVE } from '../engine/oddsStore.ts';
import { isOddsIdForm } from './idBytes.ts';
import { tickId, type TickBatch } from './tickBatch.ts';
import type { TickSlots } from './tickSlots.ts';

/** The limits validate.ts holds prices to (see there). */
const AMERICAN_LIMIT = 2 ** 30;
const DFS_MIN = 0.5;
const DFS_MAX = 2;

/** Fills batch.slot and marks DFS rows' ticks; false when any tick is not valid as it stands. */
export function validateTicks(batch: TickBatch, engine: OddsEngine, tickSlots: TickSlots): boolean {
  const store = engine.store;
  const state = store.state;
  const eventOf = store.event;
  const bookOf = store.book;
  const status = engine.eventTable.status;
  const { body, view, idStart, idLength, idHash, american, dfs, fields, slot: slots } = batch;
  // a DFS source or not, by the book's interned index, as this batch first asks (sources change only when a batch applies)
  const dfsBook: (boolean | undefined)[] = [];
  for (let i = 0; i < batch.count; i++) {
    let slot = tickSlots.find(view, idStart[i], idLength[i], idHash[i]);
    const noted = slot >= 0;
    if (!noted) {
      // first met: the id form validate.ts's pattern asks (a noted id had it)
      if (!isOddsIdForm(body, idStart[i], idLength[i])) return false;
      slot = engine.slotOf(tickId(batch, i));
    }
    if (slot < 0 || slot >= store.size || state[slot] !== SLOT_LIVE) return false;
    const eventStatus = status[eventOf[slot]];
    if (eventStatus === STATUS_FINAL || eventStatus === STATUS_CANCELLED) return false;
    if (!noted) tickSlots.noteBytes(body, idStart[i], idLength[i], idHash[i], slot);
    slots[i] = slot;

    const book = bookOf[slot];
    let isDfs = dfsBook[book];
    if (isDfs === undefined) {
      const kind: SourceKind | undefined = engine.sources.kindOf(store.books.get(book));
      isDfs = dfsBook[book] = kind === 'dfs';
    }
    const f = fields[i];
    if ((f & (TICK_AMERICAN | TICK_DFS)) === 0) {
      if ((f & TICK_HAS_SUSPENDED) === 0) return false; // neither a price nor suspended
    } else if (isDfs) {
      if ((f & TICK_AMERICAN) !== 0) return false;
      const multiplier = dfs[i];
      if (!(multiplier >= DFS_MIN && multiplier <= DFS_MAX)) return false;
      fields[i] = f | TICK_AMERICAN | TICK_AMERICAN_NULL;
    } else {
      if ((f & TICK_DFS) !== 0) return false;
      const price = american[i];
      const magnitude = Math.abs(price);
      if (magnitude < 100 || magnitude >= AMERICAN_LIMIT) return false;
    }
  }
  return true;
}
