// Every string on the board is stored once and referred to by a small integer id, so
// the columnar store holds Int32 references instead of millions of string pointers.
// The JSON-escaped form is cached per id because row fragments are built from it.

export class StringPool {
  private readonly ids = new Map<string, number>();
  private readonly strings: string[] = [];
  private readonly jsonForms: (string | undefined)[] = [];

  get size(): number {
    return this.strings.length;
  }

  /** The id of `text`, adding it if new. */
  intern(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.strings.length;
      this.ids.set(text, id);
      this.strings.push(text);
    }
    return id;
  }

  /** The id of `text`, or -1 when it was never interned (lookups must not grow the pool). */
  lookup(text: string): number {
    const id = this.ids.get(text);
    return id === undefined ? -1 : id;
  }

  get(id: number): string {
    return this.strings[id];
  }

  /** JSON.stringify(get(id)), computed once. */
  json(id: number): string {
    let form = this.jsonForms[id];
    if (form === undefined) {
      form = JSON.stringify(this.strings[id]);
      this.jsonForms[id] = form;
    }
    return form;
  }

  /** Every string in id order (a checkpoint saves the pool as this list). */
  all(): readonly string[] {
    return this.strings;
  }

  /** Fills an empty pool with `strings`, id i for strings[i] (restoring a checkpoint). */
  restore(strings: readonly string[]): void {
    if (this.strings.length > 0) throw new Error('restore needs an empty pool');
    for (const text of strings) this.intern(text);
    if (this.strings.length !== strings.length) throw new Error('a saved string pool holds duplicates');
  }

  /** Ids ordered by their strings under `compare` (used to build sort ranks at load). */
  ranks(compare: (a: string, b: string) => number): Int32Array {
    const order = Array.from({ length: this.strings.length }, (_, i) => i);
    order.sort((a, b) => compare(this.strings[a], this.strings[b]));
    const rank = new Int32Array(this.strings.length);
    for (let r = 0; r < order.length; r++) rank[order[r]] = r;
    return rank;
  }
}
