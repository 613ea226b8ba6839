// What operating the process needs before and besides the API: the metrics registry,
// the readiness checks, and the operations listener that serves /metrics, /healthz and
// /readyz on its own port (METRICS_PORT, 127.0.0.1 by default).
//
// Why a listener of its own rather than /metrics on the public port: the metrics name
// every route, the traffic mix and the heap, which is for the operator, not for API
// clients, and a separate port can stay on a private interface without an auth scheme;
// it also listens before the board is loaded, so /readyz can answer 503 "loading"
// during the seconds a large board takes, while the public port only opens once the
// board is there. The same route sets (http/routes/health.ts, http/metricsRoute.ts)
// mount on the ingest listener once it exists, and METRICS_PORT=off then drops this one.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { metricsRoute } from '../http/metricsRoute.ts';
import { healthRoutes, Readiness } from '../http/routes/health.ts';
import { createServer, type RunningServer } from '../http/server.ts';

export class Operations {
  readonly registry = new Registry();
  readonly readiness = new Readiness();
  private listener: RunningServer | null = null;

  constructor() {
    // event-loop lag, heap, RSS, GC and handles under their usual names (process_*, nodejs_*)
    collectDefaultMetrics({ register: this.registry });
  }

  /** The operations listener's port, or null when it is not listening. */
  get port(): number | null {
    return this.listener?.port ?? null;
  }

  /** Starts the operations listener (port 0: an ephemeral one). */
  async listen(host: string, port: number): Promise<number> {
    if (this.listener !== null) throw new Error('the operations listener is already listening');
    this.listener = await createServer({ routes: [...healthRoutes(this.readiness), metricsRoute(this.registry)], host, port, openapi: false });
    return this.listener.port;
  }

  async close(): Promise<void> {
    const listener = this.listener;
    this.listener = null;
    await listener?.close();
  }
}
