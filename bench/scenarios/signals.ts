// Signal route scenarios for the HTTP bench (issue 6): /edges and /arbitrage (default
// parameters, first page of 100: a slice of the kept, sorted books, served from the
// response cache while the books' version holds), /edges under a per-request devig
// method, the 304 path, and /historical/arbitrage over a 10-minute window (not cached:
// every request replays the rings), all against the uWS hello world.
import type { App } from '../../http/app.ts';
import type { Scenario } from './scenario.ts';

export function scenarios(app: App): Scenario[] {
  const now = app.engine.clock.now();
  const from = new Date(now - 10 * 60_000).toISOString();
  const to = new Date(now).toISOString();
  return [
    { name: 'edges', path: '/api/v1/edges', reference: 'hello' },
    { name: 'edges devig=power', path: '/api/v1/edges?devig=power', reference: 'hello' },
    { name: 'arbitrage', path: '/api/v1/arbitrage', reference: 'hello' },
    { name: 'arbitrage 304', path: '/api/v1/arbitrage', ifNoneMatch: true, reference: 'hello' },
    { name: 'historical/arbitrage 10-min window', path: `/api/v1/historical/arbitrage?from=${from}&to=${to}`, reference: 'hello' },
  ];
}
