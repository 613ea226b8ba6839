// Sportsbook / DFS source ids as small ints for the signal loops. Seeded from SOURCES;
// a source first seen later is added with the kind its rows reveal.

import { grown } from '../columns.ts';
import { SOURCES, type SourceKind } from '../model.ts';

export class SourceTable {
  readonly ids: string[] = [];
  /** 1 for DFS pick'em sources: they never enter arbitrage and are the subject of edges. */
  isDfs = new Uint8Array(32);
  private readonly byId = new Map<string, number>();

  constructor(seed: readonly { id: string; kind: SourceKind }[] = SOURCES) {
    for (const source of seed) this.intern(source.id, source.kind);
  }

  get count(): number {
    return this.ids.length;
  }

  /** Index of a source, adding it (with kindIfNew) when unseen. */
  intern(id: string, kindIfNew: SourceKind = 'retail'): number {
    const known = this.byId.get(id);
    if (known !== undefined) return known;
    const index = this.ids.length;
    if (index === this.isDfs.length) this.isDfs = grown(this.isDfs, index + 1);
    this.ids.push(id);
    this.isDfs[index] = kindIfNew === 'dfs' ? 1 : 0;
    this.byId.set(id, index);
    return index;
  }

  /** -1 when unknown. */
  indexOf(id: string): number {
    return this.byId.get(id) ?? -1;
  }
}
