// The replay window: /odds/updated?since= and the stream's resume reach back
// REPLAY_WINDOW_HOURS (default 24) through the tick archive. Past the board's tombstone
// horizon the only thing the board has forgotten is the rows removed since (their
// tombstones were recycled); every row changed since and still held, live or removed,
// is on the board with its `updated`. The archive keeps each removal with the row as
// the board held it (archiveRows.ts, removed_rows), so the answer is the board's delta
// plus the rows removed at or after `since` that the board no longer holds: the same
// rows a replay of the log from `since` ends with.
//
// The archive vouches for a since only when it holds every record from before it on:
// nothing missing at its start (its first record is the log's first, or older than
// since), no failed flush pending a catch-up, and no removal it could not capture
// (an archive that caught up after the board forgot the rows, or files written before
// removed_rows existed). Otherwise the caller answers as without an archive.
import { ArchivedTombstones, type ReplaySource } from '../engine/archivedTombstones.ts';
import type { OddsEngine } from '../engine/engine.ts';
import type { OddsInput } from '../engine/model.ts';
import type { TickArchive } from '../persistence/archive/tickArchive.ts';

/** A record's time is its apply time, but the board never moves time back: rows removed in a record of time t have updated >= t, so the archive is asked from a little before `since`. */
const CLOCK_SLACK_MS = 60_000;

export class ReplayWindow implements ReplaySource {
  /** The last answer, valid while the board's horizon (what it has recycled) stands. */
  private memo: { since: number; horizon: number; answer: Promise<ArchivedTombstones | null> } | null = null;
  queries = 0;

  constructor(
    private readonly engine: OddsEngine,
    private readonly archive: TickArchive,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  covers(since: number): boolean {
    return since >= this.now() - this.windowMs && since >= this.engine.firstLoadTime();
  }

  tombstonesSince(since: number): Promise<ArchivedTombstones | null> {
    const horizon = this.engine.tombstoneHorizon();
    const memo = this.memo;
    if (memo !== null && memo.since === since && memo.horizon === horizon) return memo.answer;
    const answer = this.query(since).catch(() => null);
    const entry = { since, horizon, answer };
    this.memo = entry;
    // a refusal (the archive behind after a failed flush, say) is not kept: the next request asks again
    void answer.then((found) => {
      if (found === null && this.memo === entry) this.memo = null;
    });
    return answer;
  }

  private async query(since: number): Promise<ArchivedTombstones | null> {
    this.queries++;
    const found = await this.archive.removalsSince(since - CLOCK_SLACK_MS);
    if (!found.complete) return null;
    if (found.firstRecord > 1 && !(since > found.firstRecordTime)) return null;
    const latest = new Map<string, OddsInput>();
    for (const row of found.rows) {
      if (row.removed_rows === null) return null;
      const removed = JSON.parse(row.removed_rows) as OddsInput[];
      for (const input of removed) {
        const id = `${input.eventId}:${input.sportsbook}:${input.marketSubtype}:${input.selectionId}`;
        // a later removal of the same id replaces the earlier one
        latest.delete(id);
        latest.set(id, input);
      }
    }
    const rows: OddsInput[] = [];
    for (const input of latest.values()) if (input.updated >= since) rows.push(input);
    return new ArchivedTombstones(rows);
  }
}
