// One load-test target of the HTTP bench (bench/http.bench.ts). A scenario module
// exports `scenarios(app)` returning these; the bench fetches each path once,
// then runs wrk against the app and against the scenario's reference server.
import type { App } from '../../service/app.ts';

export interface Scenario {
  /** Short label used in the result keys, e.g. 'odds league=nba limit=100'. */
  name: string;
  /** Path and query on the app, e.g. '/api/v1/odds?league=nba&limit=100'. */
  path: string;
  /** Extra request headers sent by wrk (and by the one priming fetch). */
  headers?: Record<string, string>;
  /** Send If-None-Match with the ETag of the priming fetch: the 304 path. */
  ifNoneMatch?: boolean;
  /**
   * 'ceiling': uWS writing the identical response bytes from a prebuilt Buffer (the
   * best this body size can do); 'hello': a uWS hello world (for tiny bodies and 304s).
   */
  reference: 'ceiling' | 'hello';
}

export type ScenarioModule = (app: App) => Scenario[] | Promise<Scenario[]>;
