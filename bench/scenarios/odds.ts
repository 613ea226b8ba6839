// Odds route scenarios for the HTTP bench: the smallest route (/status),
// an event-scoped read of about 300 rows, a league page of 100 and of 1000 rows, and
// the 304 path of the event read.
import type { App } from '../../service/app.ts';
import type { Scenario } from './scenario.ts';

/** The event whose row count is closest to `target` (ties: the smaller id). */
export function eventWithRows(app: App, target: number): { id: string; rows: number } {
  const engine = app.engine;
  let best = { id: '', rows: -1 };
  for (const id of engine.eventIdsWithLiveRows()) {
    const filter = { leagues: null, sportsbooks: null, markets: null, eventIds: [id], playerId: null, teamId: null, scope: null, isMain: false };
    const rows = engine.odds.page(filter, null, target * 4).count;
    if (best.rows < 0 || Math.abs(rows - target) < Math.abs(best.rows - target)) best = { id, rows };
  }
  return best;
}

export function scenarios(app: App): Scenario[] {
  const event = eventWithRows(app, 300);
  const eventPath = `/api/v1/odds?event_id=${encodeURIComponent(event.id)}&limit=1000`;
  return [
    { name: 'status', path: '/api/v1/status', reference: 'ceiling' },
    { name: `odds event_id (${event.rows} rows)`, path: eventPath, reference: 'ceiling' },
    { name: 'odds league=nba limit=100', path: '/api/v1/odds?league=nba&limit=100', reference: 'ceiling' },
    { name: 'odds league=nba limit=1000', path: '/api/v1/odds?league=nba&limit=1000', reference: 'ceiling' },
    { name: 'odds event_id 304', path: eventPath, ifNoneMatch: true, reference: 'hello' },
  ];
}
