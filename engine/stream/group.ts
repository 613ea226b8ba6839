// Subscriptions with the same filter share one group: one compiled matcher, and the
// rows of a batch it matched (numbered by the fan-out pass that matched them).
import type { CompiledFilter } from './streamFilter.ts';
import type { IndexedGroup } from './groupIndex.ts';

/** Generic in its members (the hub's subscriptions), so this file needs none of theirs. */
export class Group<Member> implements IndexedGroup {
  readonly subs = new Set<Member>();
  pass = 0;
  matched = new Int32Array(16);
  matchedCount = 0;

  constructor(
    readonly key: string,
    readonly compiled: CompiledFilter,
  ) {}
}
