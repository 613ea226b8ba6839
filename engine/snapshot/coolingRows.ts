// The hot rows a snapshot variant rendered, filed by the heat moment at which each
// turns cold if it does not move again (rowCuts.ts). When the variant's heat moment
// moves on, the rows due by then are handed back to be re-rendered: their weight
// drops, so their pieces grow back to the cold size. Each slot is filed once, under
// the moment it was last rendered with (a row that moved since is hot for longer and
// is filed again under its new moment, its old entry ignored), so the files hold at
// most one entry per hot row plus those that already moved on. A slot handed back
// that is no longer hot, or holds another row by now, is only re-rendered once more
// for nothing: the walk finds the same cuts.

import { grown } from '../columns.ts';

export class CoolingRows {
  /** Slots by the moment they cool (epoch seconds). */
  private readonly due = new Map<number, number[]>();
  /** Per slot: the moment it is filed under (0: not filed). */
  private filedAt = new Float64Array(0);
  private earliest = Infinity;

  add(slot: number, coolsAt: number): void {
    if (slot >= this.filedAt.length) this.filedAt = grown(this.filedAt, slot + 1);
    if (this.filedAt[slot] === coolsAt) return;
    this.filedAt[slot] = coolsAt;
    let list = this.due.get(coolsAt);
    if (list === undefined) {
      list = [];
      this.due.set(coolsAt, list);
    }
    list.push(slot);
    if (coolsAt < this.earliest) this.earliest = coolsAt;
  }

  /** Hands over and forgets every slot due at or before `moment`. */
  takeDue(moment: number, visit: (slot: number) => void): void {
    if (moment < this.earliest) return;
    let earliest = Infinity;
    for (const [at, slots] of this.due) {
      if (at <= moment) {
        this.due.delete(at);
        for (const slot of slots) {
          if (this.filedAt[slot] !== at) continue; // filed again under a later moment
          this.filedAt[slot] = 0;
          visit(slot);
        }
      } else if (at < earliest) earliest = at;
    }
    this.earliest = earliest;
  }

  get size(): number {
    let n = 0;
    for (const slots of this.due.values()) n += slots.length;
    return n;
  }
}
