// Signal route scenarios for the HTTP bench: /edges and /arbitrage (default
// parameters, first page of 100: a slice of the kept, sorted books, served from the
// response cache while the books' version holds), /edges under a per-request devig
// method and the 304 path, all against the uWS hello world. /historical/arbitrage is
// not here: every request replays the rings (tens to hundreds of ms on the large
// board), so 64 wrk connections would only measure queueing; its latency is measured
// directly in the signals section (bench/signalsEngine.bench.ts).
import type { App } from '../../service/app.ts';
import type { Scenario } from './scenario.ts';

export function scenarios(_app: App): Scenario[] {
  return [
    { name: 'edges', path: '/api/v1/edges', reference: 'hello' },
    { name: 'edges devig=power', path: '/api/v1/edges?devig=power', reference: 'hello' },
    { name: 'arbitrage', path: '/api/v1/arbitrage', reference: 'hello' },
    { name: 'arbitrage 304', path: '/api/v1/arbitrage', ifNoneMatch: true, reference: 'hello' },
  ];
}
