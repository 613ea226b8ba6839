// Liveness and readiness probes, as a route set any listener can mount (the public
// API port, and the ingest port, which opens before the board is loaded):
//
//   GET /healthz  200 {"status":"ok"} whenever the process answers at all
//   GET /readyz   200 {"status":"ready","checks":{...}} when every readiness check
//                 passes; otherwise 503 not_ready naming each check that does not,
//                 with its reason (the board is still loading, the log is still
//                 replaying, the process is shutting down, a replica is catching
//                 up with its stream); a check that reports figures (a replica's
//                 lag) adds them to the ready body under its name
//
// A check belongs to the whole process or to its write path only (scope 'writes': the
// log failed and refuses every batch until a restart). Each port has its own view:
// the ingest port (view 'writes') is not ready while any check fails; the public port
// (view 'reads') is not made unready by a write-path check, since reads are still
// answered from memory, but its body names the failing check all the same. So a load
// balancer keeps sending reads to a node whose log failed, a feed's router stops
// sending it batches, and the operator sees why on either port.
//
// Neither needs a key nor counts as API usage (the authenticator is not called), and
// neither is cached: each answer is the state at that request. They are not in the
// OpenAPI document: they describe the process, not the data service.
import { HttpError } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { DocumentResult } from '../request.ts';

interface Check {
  ready: boolean;
  reason: string;
}

/** A check evaluated at each /readyz: its state now, and figures for the ready body. */
export interface ProbeState extends Check {
  info?: Record<string, unknown>;
}

/** What a check is about: the whole process, or only its write path (it does not stop reads). */
export type CheckScope = 'process' | 'writes';
/** Which port asks: the public one (reads) or the ingest one (writes, probes, metrics). */
export type ReadinessView = 'reads' | 'writes';

const counts = (scope: CheckScope, view: ReadinessView): boolean => scope === 'process' || view === 'writes';

/**
 * Named conditions the process must meet before it takes traffic; each starts not ready.
 * A part that must be ready declares its own check (expect), then passes or fails it as
 * its state changes (a replica catching up, the board loading, shutdown starting);
 * /readyz needs no change for a new one.
 */
export class Readiness {
  private readonly checks = new Map<string, Check>();
  private readonly probes = new Map<string, { probe: () => ProbeState; scope: CheckScope }>();

  /**
   * Declares a check whose state `probe` says at each look (a replica's lag behind its
   * stream); scope 'writes': it makes only the ingest port's view unready.
   */
  probe(name: string, probe: () => ProbeState, scope: CheckScope = 'process'): void {
    this.probes.set(name, { probe, scope });
  }

  /** Declares a check, not ready for `reason` until pass(name). */
  expect(name: string, reason: string): void {
    this.checks.set(name, { ready: false, reason });
  }

  pass(name: string): void {
    this.checks.set(name, { ready: true, reason: '' });
  }

  fail(name: string, reason: string): void {
    this.checks.set(name, { ready: false, reason });
  }

  /** True when every check that counts in `view` passes (default: all of them). */
  ready(view: ReadinessView = 'writes'): boolean {
    for (const check of this.checks.values()) if (!check.ready) return false;
    for (const { probe, scope } of this.probes.values()) if (counts(scope, view) && !probe().ready) return false;
    return true;
  }

  /** Each check's name and its reason, for those not ready and counting in `view`. */
  problems(view: ReadinessView = 'writes'): string[] {
    const out: string[] = [];
    for (const [name, check] of this.checks) if (!check.ready) out.push(`${name}: ${check.reason}`);
    for (const [name, { probe, scope }] of this.probes) {
      if (!counts(scope, view)) continue;
      const state = probe();
      if (!state.ready) out.push(`${name}: ${state.reason}`);
    }
    return out;
  }

  snapshot(): Record<string, 'ok' | string> {
    const out: Record<string, string> = {};
    for (const [name, check] of this.checks) out[name] = check.ready ? 'ok' : check.reason;
    for (const [name, { probe }] of this.probes) {
      const state = probe();
      out[name] = state.ready ? 'ok' : state.reason;
    }
    return out;
  }

  /** The figures each probe reports (by its name), for the ready body. */
  info(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const [name, { probe }] of this.probes) {
      const info = probe().info;
      if (info !== undefined) out[name] = info;
    }
    return out;
  }
}

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

const OK_BODY = Buffer.from(JSON.stringify({ status: 'ok' }));

/** The probes as `view`'s port serves them (default 'writes': every check counts). */
export function healthRoutes(readiness: Readiness, view: ReadinessView = 'writes'): AnyRoute[] {
  const healthz = defineRoute({
    path: HEALTH_PATH,
    auth: 'none',
    authenticate: false,
    documented: false,
    response: 'OpenApiDocument',
    responseKind: 'document',
    query: [],
    handle: (): DocumentResult => ({ kind: 'document', body: OK_BODY }),
  });
  const readyz = defineRoute({
    path: READY_PATH,
    auth: 'none',
    authenticate: false,
    documented: false,
    response: 'OpenApiDocument',
    responseKind: 'document',
    query: [],
    handle: (): DocumentResult => {
      if (!readiness.ready(view)) throw new HttpError('not_ready', `not ready: ${readiness.problems(view).join('; ')}`).with({ checks: readiness.snapshot(), ...readiness.info() });
      return { kind: 'document', body: Buffer.from(JSON.stringify({ status: 'ready', checks: readiness.snapshot(), ...readiness.info() })) };
    },
  });
  return [healthz, readyz];
}
