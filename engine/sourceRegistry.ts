// The sources (sportsbooks and DFS apps) the board knows, with their kind: sharp books
// set fair value for edges, retail books are compared against it, DFS sources price in
// multipliers and never enter arbitrage. Seeded with the built-in sources; a feed adds
// new ones with the 'source' change before sending their rows.

import { SOURCES, type SourceKind, type SourceRecord } from './model.ts';

export class SourceRegistry {
  private readonly byId = new Map<string, SourceRecord>();

  constructor(seed: readonly SourceRecord[] = SOURCES) {
    for (const source of seed) this.byId.set(source.id, { ...source });
  }

  /** Adds a source, or replaces the name and kind of a known one. */
  register(source: SourceRecord): void {
    this.byId.set(source.id, { id: source.id, name: source.name, kind: source.kind });
  }

  kindOf(id: string): SourceKind | undefined {
    return this.byId.get(id)?.kind;
  }

  get(id: string): SourceRecord | undefined {
    return this.byId.get(id);
  }

  /** Every source in registration order (the built-in ones first). */
  list(): SourceRecord[] {
    return [...this.byId.values()].map((source) => ({ ...source }));
  }
}
