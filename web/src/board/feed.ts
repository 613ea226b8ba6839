// Where the board's rows come from. The page talks to one BoardFeed: bootstrap() loads
// the whole board once, then every change arrives through onChange (rows to upsert by id,
// tombstones with removed: true to delete). PollingFeed implements it with the sync
// contract of the HTTP API (see /api/v1/openapi.json, /snapshot and /odds/updated); a
// push-stream source can implement the same interface and replace it without the store,
// the grid or the panels changing. StreamFeed (streamFeed.ts) is that source, and the
// page's default; it falls back to this one when WebSockets cannot connect at all.
import { ApiError, getJson } from './api.ts';
import type { Envelope, EventInfo, OddsRow, Snapshot } from './types.ts';

export interface BoardBootstrap {
  rows: OddsRow[];
  events: EventInfo[];
  /** The board's as-of time (ISO-8601) the rows are current at. */
  updated: string;
}

export type FeedState =
  | { kind: 'loading' }
  | { kind: 'live'; updated: string; source: 'stream' | 'polling' }
  | { kind: 'retrying'; error: string; inMs: number }
  | { kind: 'needs-key'; error: string };

export interface BoardFeed {
  /** The whole board; after it, start() delivers what changed since. */
  bootstrap(): Promise<BoardBootstrap>;
  /** Each batch of changed rows, in the order the service reported them. */
  onChange(listener: (rows: readonly OddsRow[]) => void): void;
  /** Connection state, for the health bar. */
  onState(listener: (state: FeedState) => void): void;
  /** A new bootstrap the page must replace its board with (the feed could not resume). */
  onReset(listener: (bootstrap: BoardBootstrap) => void): void;
  start(): void;
  stop(): void;
}

const POLL_MS = 250;
const PAGE_LIMIT = 1000;
/**
 * Tombstones stay in the delta feed for at least 10 minutes (see /odds/updated); a page
 * that could not poll for longer may have missed removals, so it loads the board again.
 */
const RESUME_WINDOW_MS = 9 * 60 * 1000;

export class PollingFeed implements BoardFeed {
  private since: string | null = null;
  private lastPoll = 0;
  private running = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;
  private readonly changeListeners: ((rows: readonly OddsRow[]) => void)[] = [];
  private readonly stateListeners: ((state: FeedState) => void)[] = [];
  private readonly resetListeners: ((bootstrap: BoardBootstrap) => void)[] = [];
  private abort = new AbortController();

  onChange(listener: (rows: readonly OddsRow[]) => void): void {
    this.changeListeners.push(listener);
  }

  onState(listener: (state: FeedState) => void): void {
    this.stateListeners.push(listener);
  }

  onReset(listener: (bootstrap: BoardBootstrap) => void): void {
    this.resetListeners.push(listener);
  }

  async bootstrap(): Promise<BoardBootstrap> {
    this.emitState({ kind: 'loading' });
    const snapshot = await getJson<Snapshot>('/api/v1/snapshot', this.abort.signal);
    const rows: OddsRow[] = [];
    const events: EventInfo[] = [];
    for (const event of snapshot.events) {
      events.push({ id: event.id, league: event.league, startTime: event.startTime, status: event.status, homeTeamId: event.homeTeamId, awayTeamId: event.awayTeamId });
      for (const row of event.odds) rows.push(row);
    }
    this.since = snapshot.syncToken;
    this.lastPoll = Date.now();
    return { rows, events, updated: snapshot.updated };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    this.abort = new AbortController();
  }

  /** Tries again at once (after the key changed, say). */
  retryNow(): void {
    if (!this.running) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    try {
      if (this.since === null || Date.now() - this.lastPoll > RESUME_WINDOW_MS) {
        const fresh = await this.bootstrap();
        for (const listener of this.resetListeners) listener(fresh);
      } else {
        await this.pollOnce(this.since);
      }
      this.failures = 0;
      this.emitState({ kind: 'live', updated: this.since!, source: 'polling' });
      if (this.running) this.schedule(POLL_MS);
    } catch (error) {
      if (!this.running) return;
      const api = error instanceof ApiError ? error : new ApiError(0, 'error', String(error));
      this.failures++;
      // Backs off while the service is away; resumes from the same since when it returns.
      const inMs = Math.min(5000, 250 * 2 ** Math.min(this.failures, 5));
      if (api.status === 401) this.emitState({ kind: 'needs-key', error: api.message });
      else this.emitState({ kind: 'retrying', error: api.message, inMs });
      this.schedule(inMs);
    }
  }

  /** One walk of /odds/updated from since; the next since is the walk's meta.updated. */
  private async pollOnce(since: string): Promise<void> {
    let cursor: string | null = null;
    let next = since;
    do {
      const path: string =
        `/api/v1/odds/updated?since=${encodeURIComponent(since)}&limit=${PAGE_LIMIT}` + (cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`);
      const page: Envelope<OddsRow> = await getJson<Envelope<OddsRow>>(path, this.abort.signal);
      if (page.data.length > 0) for (const listener of this.changeListeners) listener(page.data);
      next = page.meta.updated;
      cursor = page.nextCursor;
    } while (cursor !== null);
    this.since = next;
    this.lastPoll = Date.now();
  }

  private emitState(state: FeedState): void {
    for (const listener of this.stateListeners) listener(state);
  }
}
