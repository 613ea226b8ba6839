// Version counters that the HTTP response cache uses as validity tokens: a cached page
// is still right while the version of the data it was read from is unchanged, so an
// unchanged poll costs a number comparison instead of a query. Reading one is a field
// load; every write path in persistence/ bumps the repositories it touched.

export const DATA_SETS = ['events', 'teams', 'players', 'stats', 'seasons'] as const;
export type DataSet = (typeof DATA_SETS)[number];

const SLOT: Record<DataSet, number> = { events: 0, teams: 1, players: 2, stats: 3, seasons: 4 };

export class DataVersions {
  private readonly versions = new Float64Array(DATA_SETS.length);
  private readonly changed = new Float64Array(DATA_SETS.length);
  private total = 0;

  /** @param changedAt epoch ms the data was last changed, e.g. when it was loaded. */
  constructor(changedAt = 0) {
    this.changed.fill(changedAt);
  }

  /** The version of one data set, or (no argument) a counter that moves on any change. */
  version(set?: DataSet): number {
    return set === undefined ? this.total : this.versions[SLOT[set]]!;
  }

  /**
   * Epoch ms of the last change of a data set, for meta.updated on lists whose rows
   * carry no time of their own (so an unchanged page keeps its body and ETag).
   */
  changedAt(set: DataSet): number {
    return this.changed[SLOT[set]]!;
  }

  bump(sets: readonly DataSet[], at: number): void {
    for (const set of sets) {
      const slot = SLOT[set];
      this.versions[slot]!++;
      if (at > this.changed[slot]!) this.changed[slot] = at;
    }
    this.total++;
  }
}
