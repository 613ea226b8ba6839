// client.sync(): an in-memory copy of the service's board that stays equal to it. The
// sync contract (see /api/v1/snapshot and /api/v1/odds/updated in the OpenAPI
// document): load the snapshot, then walk the delta feed from its syncToken, upserting
// rows by id and deleting those marked removed; the next walk starts from meta.updated
// of the previous walk's first page. After a walk that ran while nothing changed, the
// copy holds exactly the rows of a fresh snapshot.
//
// The copy follows by polling the delta feed. When the feed says the copy's `since` is
// older than what it still answers completely (its meta.note asks to re-bootstrap: rows
// removed since may have been forgotten), the walk loads the snapshot again and walks
// from its syncToken, and says so (onRebootstrap, WalkResult.rebootstrapped,
// totals.rebootstraps): the copy is never left holding rows the service removed.
//
// The push stream does the same with less traffic and latency: see streamSync.ts
// (client.streamSync()), the recommended way to keep a copy.
import type { components } from './schema.ts';

export type OddsRow = components['schemas']['OddsRow'];
export type Snapshot = components['schemas']['Snapshot'];

/** A delta-feed row: the row as /odds renders it, or its tombstone. */
export type DeltaRow = OddsRow & { removed?: boolean };

export interface DeltaPage {
  data: DeltaRow[];
  nextCursor: string | null;
  meta: { updated: string; note?: string };
}

/** What BoardSync needs from the client (OddsClient provides both). */
export interface SyncSource {
  snapshot(): Promise<Snapshot>;
  deltaPage(since: string, cursor: string | null, limit: number): Promise<DeltaPage>;
}

export interface SyncOptions {
  /** Rows per delta page (default 1000). */
  pageSize?: number;
  /** Poll period of follow() in ms (default 1000). */
  intervalMs?: number;
  /** Called with each error of a background walk (the walk is retried at the next tick). */
  onError?: (error: unknown) => void;
  /** Called with each walk follow() runs (its note included). */
  onWalk?: (result: WalkResult) => void;
  /**
   * Called when a walk re-bootstrapped the copy from the snapshot because the delta feed
   * asked for it (its note, passed here): the copy was replaced, not patched.
   */
  onRebootstrap?: (note: string) => void;
  /** Re-bootstrap by itself on the delta feed's re-bootstrap note (default true; false: only report the note). */
  rebootstrap?: boolean;
}

/** How the delta feed's note asking for a re-bootstrap reads (decisions F3). */
export const REBOOTSTRAP_NOTE = 're-bootstrap from /snapshot';

/** Whether a delta-feed note asks the client to load the snapshot again. */
export function asksRebootstrap(note: string | null | undefined): boolean {
  return typeof note === 'string' && note.includes(REBOOTSTRAP_NOTE);
}

export interface WalkResult {
  upserted: number;
  removed: number;
  pages: number;
  /** A note of the feed (e.g. since older than the tombstone horizon: bootstrap again, which the walk did unless rebootstrap is false). */
  note: string | null;
  /** The walk loaded the snapshot again on the feed's note (then walked from its syncToken). */
  rebootstrapped: boolean;
}

export class BoardSync {
  /** The board: rows by id, as /odds renders them. */
  readonly rows = new Map<string, OddsRow>();
  /** Where the next walk starts (the snapshot's syncToken, then each walk's first meta.updated). */
  since = '';
  /** What every walk since the bootstrap did, added up. */
  readonly totals = { walks: 0, pages: 0, upserted: 0, removed: 0, rebootstraps: 0 };
  private timer: NodeJS.Timeout | null = null;
  private walking: Promise<WalkResult> | null = null;
  private readonly pageSize: number;
  private readonly intervalMs: number;

  constructor(
    private readonly source: SyncSource,
    private readonly options: SyncOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 1000;
    this.intervalMs = options.intervalMs ?? 1000;
  }

  /** Loads the snapshot, replacing whatever the copy held. */
  async bootstrap(): Promise<void> {
    const snapshot = await this.source.snapshot();
    this.rows.clear();
    for (const event of snapshot.events) {
      for (const { priceHistory: _history, ...row } of event.odds) this.rows.set(row.id, row as OddsRow);
    }
    this.since = snapshot.syncToken;
  }

  /** One walk of the delta feed from `since` to its last page. Concurrent calls share one walk. */
  walk(): Promise<WalkResult> {
    this.walking ??= this.walkOnce().finally(() => (this.walking = null));
    return this.walking;
  }

  /** Upserts rows by id; a row marked removed deletes its id. */
  applyRows(rows: readonly DeltaRow[]): { upserted: number; removed: number } {
    let upserted = 0;
    let removed = 0;
    for (const row of rows) {
      if (row.removed === true) {
        this.rows.delete(row.id);
        removed++;
      } else {
        this.rows.set(row.id, row);
        upserted++;
      }
    }
    return { upserted, removed };
  }

  /** Walks every intervalMs until stop(). */
  follow(): void {
    if (this.timer !== null) return;
    const tick = () => {
      this.walk().then(
        (result) => this.options.onWalk?.(result),
        (error: unknown) => this.options.onError?.(error),
      );
    };
    this.timer = setInterval(tick, this.intervalMs);
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.walking?.catch(() => undefined);
  }

  private async walkOnce(): Promise<WalkResult> {
    const result = await this.walkPages();
    if (!asksRebootstrap(result.note) || this.options.rebootstrap === false) return result;
    // the feed no longer vouches for everything after `since`: start over from the snapshot
    await this.bootstrap();
    this.totals.rebootstraps++;
    const after = await this.walkPages();
    const combined: WalkResult = { upserted: result.upserted + after.upserted, removed: result.removed + after.removed, pages: result.pages + after.pages, note: result.note, rebootstrapped: true };
    this.options.onRebootstrap?.(result.note!);
    return combined;
  }

  private async walkPages(): Promise<WalkResult> {
    const result: WalkResult = { upserted: 0, removed: 0, pages: 0, note: null, rebootstrapped: false };
    let cursor: string | null = null;
    let next: string | null = null;
    do {
      const page = await this.source.deltaPage(this.since, cursor, this.pageSize);
      next ??= page.meta.updated;
      result.note ??= page.meta.note ?? null;
      const applied = this.applyRows(page.data);
      result.upserted += applied.upserted;
      result.removed += applied.removed;
      result.pages++;
      cursor = page.nextCursor;
    } while (cursor !== null);
    this.since = next;
    this.totals.walks++;
    this.totals.pages += result.pages;
    this.totals.upserted += result.upserted;
    this.totals.removed += result.removed;
    return result;
  }
}
