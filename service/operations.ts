// What operating the process needs besides the API: the metrics registry, the
// readiness checks, and the route set that serves them (/metrics, /healthz, /readyz).
//
// Where they are served: /healthz and /readyz on the public port and on the ingest
// port; /metrics on the ingest port only. The metrics name every route, the traffic
// mix and the heap, which is for the operator, not for API clients; the ingest port is
// already the private one (INGEST_HOST defaults to 127.0.0.1, and it is firewalled
// apart from the public port), so /metrics needs no auth scheme of its own there. The
// ingest listener opens before the board is loaded (service/durableStart.ts), so
// /readyz answers 503 "board: loading the board" during the seconds a large board
// takes, while the public port only opens once the board is there.
//
// Readiness is a list of named checks (http/routes/health.ts Readiness): each part
// that must be ready before the process takes traffic declares one with expect() and
// passes or fails it; /readyz is 200 only when all pass and otherwise names each one
// that does not, with its reason. A check of the write path alone (the log failed) makes
// the ingest port's /readyz 503 but not the public port's, which keeps serving reads and
// names the failed check in its body (http/routes/health.ts).
import { collectDefaultMetrics, Registry } from 'prom-client';
import { metricsRoute } from '../http/metricsRoute.ts';
import { healthRoutes, Readiness } from '../http/routes/health.ts';
import type { AnyRoute } from '../http/router.ts';

export class Operations {
  readonly registry = new Registry();
  readonly readiness = new Readiness();

  constructor() {
    // event-loop lag, heap, RSS, GC and handles under their usual names (process_*, nodejs_*)
    collectDefaultMetrics({ register: this.registry });
  }

  /** What the public port serves: the probes. */
  probeRoutes(): AnyRoute[] {
    return healthRoutes(this.readiness, 'reads');
  }

  /** What the ingest port serves beside the batch routes: the probes and /metrics. */
  ingestPortRoutes(): AnyRoute[] {
    return [...healthRoutes(this.readiness, 'writes'), metricsRoute(this.registry)];
  }
}
