// One priced DFS pick as the edge book keeps it: numbers and label references only,
// updated in place on every re-price; the Edge record is built when a read needs it
// and kept until the entry changes.

import type { DevigMethod } from './devig.ts';
import { edgeRecord } from './edges.ts';
import type { MarketGroups } from './marketGroups.ts';
import type { EdgeRecord } from './records.ts';
import { isoMillis } from '../timeFormat.ts';

export class EdgeEntry {
  g = -1;
  id = '';
  source = '';
  selection = '';
  side = '';
  line: number | null = null;
  multiplier = 0;
  breakeven = 0;
  fair = 0;
  /** Epoch ms: the later of the pick's and the used sharp quotes' updates. */
  updated = 0;
  sharpBooks: string[] = [];
  devig: DevigMethod = 'multiplicative';
  private record: EdgeRecord | null = null;

  get edge(): number {
    return this.fair - this.breakeven;
  }

  /** Call after changing any field. */
  changed(): void {
    this.record = null;
  }

  toRecord(groups: MarketGroups): EdgeRecord {
    if (this.record !== null) return this.record;
    const g = this.g;
    this.record = edgeRecord(
      {
        eventId: groups.eventId[g],
        league: groups.league[g],
        market: groups.market[g],
        marketSubtype: groups.marketSubtype[g],
        period: groups.period[g],
        playerId: groups.playerId[g],
        playerName: groups.playerName[g],
        eventStartTime: groups.eventStartTime[g],
      },
      {
        id: this.id,
        source: this.source,
        selection: this.selection,
        side: this.side,
        line: this.line,
        dfsMultiplier: this.multiplier,
        breakevenProbability: this.breakeven,
        fairProbability: this.fair,
        sharpBooks: this.sharpBooks,
        devig: this.devig,
        updated: isoMillis(this.updated),
      },
    );
    return this.record;
  }
}
