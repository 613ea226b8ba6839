// What changed in a ranked signal book (arbitrage, edges) between two looks: each
// record is kept by id with a fingerprint of what a subscriber cares about (its value
// to 4 decimals, its legs or quote); a new id is opened, a new fingerprint updated, an
// id gone closed (with the last record seen and the peak value while it was open).
export interface DiffEmit<R> {
  (kind: 'opened' | 'updated' | 'closed', record: R, previous: number | null, peak: number): void;
}

interface Kept<R> {
  record: R;
  value: number;
  peak: number;
  fingerprint: string;
}

export class RecordDiff<R> {
  private kept = new Map<string, Kept<R>>();

  constructor(
    private readonly idOf: (record: R) => string,
    private readonly valueOf: (record: R) => number,
    private readonly fingerprintOf: (record: R) => string,
  ) {}

  /** Takes `records` as the current state without emitting (the first look, or a signal newly wanted). */
  seed(records: Iterable<R>): void {
    this.kept.clear();
    for (const record of records) {
      const value = this.valueOf(record);
      this.kept.set(this.idOf(record), { record, value, peak: value, fingerprint: this.fingerprintOf(record) });
    }
  }

  diff(records: Iterable<R>, emit: DiffEmit<R>): void {
    const next = new Map<string, Kept<R>>();
    for (const record of records) {
      const id = this.idOf(record);
      const value = this.valueOf(record);
      const fingerprint = this.fingerprintOf(record);
      const before = this.kept.get(id);
      if (before === undefined) {
        next.set(id, { record, value, peak: value, fingerprint });
        emit('opened', record, null, value);
        continue;
      }
      const peak = Math.max(before.peak, value);
      next.set(id, { record, value, peak, fingerprint });
      if (before.fingerprint !== fingerprint) emit('updated', record, before.value, peak);
    }
    for (const [id, before] of this.kept) if (!next.has(id)) emit('closed', before.record, before.value, before.peak);
    this.kept = next;
  }

  clear(): void {
    this.kept.clear();
  }
}
