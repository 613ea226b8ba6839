// Engine changes (what the simulator builds from the board) as the changes a feed
// sends, so an in-process producer goes through the same validation, log and apply as
// the ingest listener's batches. Price ticks are addressed by odds id (slots are the
// engine's own), odds rows carry the served fields.
//
// A batch the simulator builds from the board as it stands may touch a row twice in a
// way the engine forgives but a feed batch may not: a price tick on a row whose event
// the same batch closes (closing tombstones the event's rows), or on a row the batch
// removed. Those ticks are dropped here: they would have changed nothing visible. So
// are alternate totals the simulator steps below zero: a feed's total cannot be
// negative (the validator refuses the row, and with it the whole batch).

import type { Change, OddsEngine } from '../engine/engine.ts';
import { oddsId, type OddsInput } from '../engine/model.ts';

/** The fields of an /odds row (plus its teamId) for an odds change. */
export function oddsRowFields(row: OddsInput): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: oddsId(row),
    eventId: row.eventId,
    sportsbook: row.sportsbook,
    league: row.league,
    market: row.market,
    marketSubtype: row.marketSubtype,
    period: row.period,
    selectionId: row.selectionId,
    selection: row.selection,
    side: row.side,
    teamSide: row.teamSide,
    teamName: row.teamName,
    suspended: row.suspended,
    eventStartTime: row.eventStartTime,
    teamId: row.teamId,
  };
  if (row.priceAmerican !== null) out.priceAmerican = row.priceAmerican;
  if (row.dfsMultiplier !== null) out.dfsMultiplier = row.dfsMultiplier;
  if (row.line !== null) out.line = row.line;
  if (row.playerId !== null) {
    out.playerId = row.playerId;
    out.playerName = row.playerName;
  }
  if (row.marketScope !== null) out.marketScope = row.marketScope;
  if (row.segment !== null) out.segment = row.segment;
  return out;
}

function eventOfId(id: string): string {
  return id.slice(0, id.indexOf(':'));
}

/** `batch` as feed changes, read against the board before it applies (price slots resolved to ids now). */
export function feedChanges(engine: OddsEngine, batch: readonly Change[]): unknown[] {
  const out: unknown[] = [];
  const closed = new Set<string>();
  const removed = new Set<string>();
  const touchable = (id: string) => !closed.has(eventOfId(id)) && !removed.has(id);
  for (const change of batch) {
    switch (change.op) {
      case 'price': {
        const id = engine.idOf(change.slot);
        if (!touchable(id)) break;
        const tick: Record<string, unknown> = { op: 'price', id, suspended: change.suspended };
        if (change.priceAmerican !== null) tick.priceAmerican = change.priceAmerican;
        else if (change.dfsMultiplier != null) tick.dfsMultiplier = change.dfsMultiplier;
        out.push(tick);
        break;
      }
      case 'priceById': {
        if (!touchable(change.id)) break;
        const tick: Record<string, unknown> = { op: 'price', id: change.id };
        if (change.priceAmerican != null) tick.priceAmerican = change.priceAmerican;
        else if (change.dfsMultiplier != null) tick.dfsMultiplier = change.dfsMultiplier;
        if (change.suspended !== undefined) tick.suspended = change.suspended;
        out.push(tick);
        break;
      }
      case 'upsert': {
        if (closed.has(change.row.eventId)) break;
        if ((change.row.side === 'OVER' || change.row.side === 'UNDER') && change.row.line !== null && change.row.line < 0) break;
        const row = oddsRowFields(change.row);
        removed.delete(row.id as string);
        out.push({ op: 'odds', row });
        break;
      }
      case 'remove':
        if (!touchable(change.id)) break;
        removed.add(change.id);
        out.push({ op: 'remove', id: change.id });
        break;
      case 'status':
        if (change.status === 'final' || change.status === 'cancelled') closed.add(change.eventId);
        out.push({ op: 'status', eventId: change.eventId, status: change.status });
        break;
      case 'source':
        out.push({ op: 'source', source: change.source });
        break;
      case 'event':
        // the simulator sends none; an event change needs the cold fields (names, season) the engine does not hold
        throw new Error('feedChanges: engine event changes carry no team names or season; send an ingest event change');
    }
  }
  return out;
}
