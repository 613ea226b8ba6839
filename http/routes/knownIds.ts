// Existence checks for path ids (404 not_found) answered from a
// repository once per id: players and teams do not disappear while the process
// runs, so a known id is remembered; unknown ids are asked again (they may be loaded
// later) but never remembered, so junk ids cannot grow the set.
export class KnownIds {
  private readonly known = new Set<string>();

  constructor(private readonly exists: (id: string) => boolean) {}

  has(id: string): boolean {
    if (this.known.has(id)) return true;
    if (!this.exists(id)) return false;
    this.known.add(id);
    return true;
  }
}
