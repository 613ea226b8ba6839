// What the feed has put on the board (every change the ingest path acknowledged), so
// that each poll sends only the difference: a new outcome is an odds upsert, a new
// price a price tick on the same id, an outcome its bookmaker stopped listing a
// remove, a game that started or finished a status change. An unchanged poll yields
// no change at all. Only acknowledged changes enter the mirror: a refused or lost
// batch is simply diffed again at the next poll.

import { EVENT_STATUSES, type EventStatus } from '../../engine/model.ts';
import type { ChangeError, IngestChange } from '../../ingest/changes.ts';
import type { MappedEvent } from './mapEvent.ts';

interface MirrorRow {
  eventId: string;
  marketKey: string;
  /** priceAmerican for books, dfsMultiplier for DFS apps. */
  price: number;
  dfs: boolean;
}

interface MirrorEvent {
  /** null: the board holds the event but we do not know its status (it refused our record). */
  status: EventStatus | null;
  startTime: number;
  sportKey: string;
}

function isEventStatus(text: string | undefined): text is EventStatus {
  return (EVENT_STATUSES as readonly string[]).includes(text ?? '');
}

export class BoardMirror {
  private readonly rows = new Map<string, MirrorRow>();
  private readonly rowsOfEvent = new Map<string, Set<string>>();
  private readonly events = new Map<string, MirrorEvent>();
  private readonly teams = new Set<string>();
  private readonly players = new Set<string>();
  private readonly sources = new Set<string>();
  /** marketKey of rows sent but not yet acknowledged (an odds change carries no provider key). */
  private readonly pendingKeys = new Map<string, string>();
  /** Rows the ingest path refused, with the price refused: not sent again until the provider's price changes. */
  private readonly refusedRows = new Map<string, number>();

  get rowCount(): number {
    return this.rows.size;
  }

  eventStatus(id: string): EventStatus | null | undefined {
    return this.events.get(id)?.status;
  }

  /** Events of a sport the board may still show as not finished. */
  openEvents(sportKey: string): { id: string; status: EventStatus | null; startTime: number }[] {
    const out: { id: string; status: EventStatus | null; startTime: number }[] = [];
    for (const [id, e] of this.events) {
      if (e.sportKey === sportKey && e.status !== 'final' && e.status !== 'cancelled') out.push({ id, status: e.status, startTime: e.startTime });
    }
    return out;
  }

  /**
   * The changes that bring the board from what it holds to `mapped`, for the market keys
   * this answer covers (rows of other keys come from other requests and are left alone).
   */
  diffEvent(mapped: MappedEvent, sportKey: string, coveredKeys: ReadonlySet<string>, now: number, out: IngestChange[]): void {
    for (const source of mapped.sources) if (!this.sources.has(source.id)) out.push({ op: 'source', source });
    for (const team of mapped.teams) if (!this.teams.has(team.id)) out.push({ op: 'team', team });
    for (const player of mapped.players) if (!this.players.has(player.id)) out.push({ op: 'player', player });
    const id = mapped.event.id;
    const known = this.events.get(id);
    if (known === undefined) {
      out.push({ op: 'event', event: { ...mapped.event, status: 'scheduled' } });
      this.events.set(id, { status: null, startTime: Number(mapped.event.startTime), sportKey });
    }
    const status = known === undefined ? 'scheduled' : known.status;
    if (status === 'final' || status === 'cancelled') return;
    const start = Number(mapped.event.startTime);
    if (known !== undefined && known.startTime !== start && known.status !== null) {
      // the provider moved this fixture (its own commence_time): the event record follows,
      // with the status the board holds (a status only changes through a status change)
      out.push({ op: 'event', event: { ...mapped.event, status: known.status } });
      known.startTime = start;
    }
    if (status === 'scheduled' && Number(mapped.event.startTime) <= now) out.push({ op: 'status', eventId: id, status: 'in_progress' });
    const seen = new Set<string>();
    for (const { row, marketKey } of mapped.rows) {
      if (seen.has(row.id)) continue; // a book listing one outcome twice: the first wins
      seen.add(row.id);
      const held = this.rows.get(row.id);
      const dfs = row.dfsMultiplier !== undefined && row.dfsMultiplier !== null;
      const price = (dfs ? row.dfsMultiplier : row.priceAmerican) as number;
      if (held === undefined) {
        if (this.refusedRows.get(row.id) === price) continue;
        this.refusedRows.delete(row.id);
        out.push({ op: 'odds', row });
        this.pendingKeys.set(row.id, marketKey);
      } else if (held.price !== price) {
        out.push(dfs ? { op: 'price', id: row.id, dfsMultiplier: price } : { op: 'price', id: row.id, priceAmerican: price });
      }
    }
    this.pullMissing(id, coveredKeys, seen, out);
  }

  /** Removes for the rows of `eventId` under the covered keys that the answer no longer lists. */
  pullMissing(eventId: string, coveredKeys: ReadonlySet<string>, seen: ReadonlySet<string>, out: IngestChange[]): void {
    const ids = this.rowsOfEvent.get(eventId);
    if (ids === undefined) return;
    for (const rowId of ids) {
      const row = this.rows.get(rowId)!;
      if (coveredKeys.has(row.marketKey) && !seen.has(rowId)) out.push({ op: 'remove', id: rowId });
    }
  }

  /** Status changes that take the event to `target` through the allowed transitions. */
  statusTo(eventId: string, target: 'in_progress' | 'final', out: IngestChange[]): void {
    const status = this.events.get(eventId)?.status;
    if (status === undefined || status === null || status === target || status === 'final' || status === 'cancelled') return;
    if (status === 'scheduled' || status === 'suspended') out.push({ op: 'status', eventId, status: 'in_progress' });
    if (target === 'final') out.push({ op: 'status', eventId, status: 'final' });
  }

  /** Records what an acknowledged batch did. */
  acknowledged(changes: readonly IngestChange[]): void {
    for (const change of changes) {
      switch (change.op) {
        case 'source':
          this.sources.add(change.source.id);
          break;
        case 'team':
          this.teams.add(change.team.id);
          break;
        case 'player':
          this.players.add(change.player.id);
          break;
        case 'event': {
          const e = this.events.get(change.event.id);
          if (e !== undefined) e.status = change.event.status;
          break;
        }
        case 'status': {
          const e = this.events.get(change.eventId);
          if (e !== undefined) e.status = change.status;
          // closing a game tombstones its rows on the board
          if (change.status === 'final' || change.status === 'cancelled') for (const id of this.rowsOfEvent.get(change.eventId) ?? []) this.forget(id);
          break;
        }
        case 'odds': {
          const dfs = change.row.dfsMultiplier !== undefined && change.row.dfsMultiplier !== null;
          const marketKey = this.pendingKeys.get(change.row.id) ?? '';
          this.pendingKeys.delete(change.row.id);
          this.rows.set(change.row.id, { eventId: change.row.eventId, marketKey, price: (dfs ? change.row.dfsMultiplier : change.row.priceAmerican) as number, dfs });
          let ids = this.rowsOfEvent.get(change.row.eventId);
          if (ids === undefined) this.rowsOfEvent.set(change.row.eventId, (ids = new Set()));
          ids.add(change.row.id);
          break;
        }
        case 'price': {
          const row = this.rows.get(change.id);
          if (row !== undefined) row.price = (row.dfs ? change.dfsMultiplier : change.priceAmerican) ?? row.price;
          break;
        }
        case 'remove':
          this.forget(change.id);
          break;
        default:
          break;
      }
    }
  }

  /**
   * Changes of `batch` the ingest path refused (errors name them by index). Refusals that
   * say the board already differs from the mirror correct it: a remove or price of a row
   * that is not live (removed already, by a batch whose answer was lost or by another
   * writer) forgets the row, so the next poll sends it anew if the provider still lists
   * it; a status change the board's status does not allow takes that status (the error
   * names it). A refused row is not sent again until the provider's price for it changes,
   * and a refused source, team or player record not at all; an event record it would not
   * take stays known with an unknown status. So a poll does not repeat a refusal.
   */
  refused(batch: readonly IngestChange[], errors: readonly ChangeError[]): void {
    for (const error of errors) {
      const change = batch[error.index];
      if (change === undefined) continue;
      switch (change.op) {
        case 'odds': {
          this.pendingKeys.delete(change.row.id);
          const dfs = change.row.dfsMultiplier !== undefined && change.row.dfsMultiplier !== null;
          this.refusedRows.set(change.row.id, (dfs ? change.row.dfsMultiplier : change.row.priceAmerican) as number);
          break;
        }
        // refused records are not offered again each poll (the log said why once)
        case 'source':
          this.sources.add(change.source.id);
          break;
        case 'team':
          this.teams.add(change.team.id);
          break;
        case 'player':
          this.players.add(change.player.id);
          break;
        case 'remove':
        case 'price':
          if (error.code === 'unknown_id') this.forget(change.id);
          break;
        case 'status': {
          const event = this.events.get(change.eventId);
          const current = /^(\w+) cannot become/.exec(error.detail)?.[1];
          if (event === undefined || error.code !== 'invalid_transition') break;
          event.status = isEventStatus(current) ? current : null;
          // a closed game has no live rows on the board
          if (event.status === 'final' || event.status === 'cancelled') for (const id of this.rowsOfEvent.get(change.eventId) ?? []) this.forget(id);
          break;
        }
        default:
          break;
      }
    }
  }

  /** Unacknowledged new events are forgotten again (the next poll sends their record anew). */
  unsent(changes: readonly IngestChange[]): void {
    for (const change of changes) {
      if (change.op === 'event') {
        const known = this.events.get(change.event.id);
        if (known?.status === null) this.events.delete(change.event.id);
        // a move not acknowledged is sent again at the next poll
        else if (known !== undefined) known.startTime = Number.NaN;
      }
      if (change.op === 'odds') this.pendingKeys.delete(change.row.id);
    }
  }

  private forget(rowId: string): void {
    const row = this.rows.get(rowId);
    if (row === undefined) return;
    this.rows.delete(rowId);
    this.rowsOfEvent.get(row.eventId)?.delete(rowId);
  }
}
