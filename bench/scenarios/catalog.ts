// Catalog route scenarios for the HTTP bench: the events page of one league
// and one event's detail, both measured against the uWS hello world (target: 40% or
// more of it), plus the 304 path of the league page. Both are cache hits: the response
// cache keyed on the raw path+query, validity from the events data version (and, for
// the clock-relative window, where the window falls among event starts).
import type { App } from '../../service/app.ts';
import type { Scenario } from './scenario.ts';

/** A game with the richest detail row (context and final score), ties by id: a realistic worst case. */
function detailEvent(app: App): string {
  const finals = app.board.events.filter((e) => !e.isFutures && app.board.teamBox.some((b) => b.eventId === e.id));
  const pool = finals.length > 0 ? finals : app.board.events.filter((e) => !e.isFutures);
  let best = pool[0]!;
  for (const e of pool) if (JSON.stringify(e.context).length > JSON.stringify(best.context).length) best = e;
  return best.id;
}

export function scenarios(app: App): Scenario[] {
  const event = detailEvent(app);
  return [
    { name: 'events league=nba', path: '/api/v1/events?league=nba', reference: 'hello' },
    { name: 'events/{id}', path: `/api/v1/events/${encodeURIComponent(event)}`, reference: 'hello' },
    { name: 'events league=nba 304', path: '/api/v1/events?league=nba', ifNoneMatch: true, reference: 'hello' },
  ];
}
