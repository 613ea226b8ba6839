// The webhook admin API, served on the ingest listener (the private port) behind its
// bearer token, like the batch routes:
//
//   GET  /alerts/v1/subscriptions                       every subscription with its delivery state
//   POST /alerts/v1/subscriptions/create                {url, filters, secret?, batchWindowMs?, maxBatchEvents?, description?, enabled?}
//                                                       -> the subscription and its secret (shown this once)
//   GET  /alerts/v1/subscriptions/:id                   one subscription
//   POST /alerts/v1/subscriptions/:id/update            any of the create fields
//   POST /alerts/v1/subscriptions/:id/delete
//   POST /alerts/v1/subscriptions/:id/replay            {from, to} (ISO-8601 or epoch ms): the events of that range again
//   POST /alerts/v1/subscriptions/:id/retry             a delivery waiting in backoff is tried now
//   GET  /alerts/v1/subscriptions/:id/dead-letters      ?after=<pos>&limit=<1..1000>, in order
//
// The facade routes one method per path (http/router.ts), so the changes are POSTs to
// a verb under the resource rather than PUT/DELETE on it. Answers use the service's
// envelope and error body. The routes are registered when the listener starts, before
// the board (and so the alerts) exist: until AlertsGate.open they answer 503 not_ready.
import { HttpError, invalidParameter, missingParameter, notFound } from '../http/errors.ts';
import { parseInstantParam } from '../http/params.ts';
import { envelopeFromData } from '../http/envelope.ts';
import type { PendingLargeBodyResult, RouteRequest } from '../http/request.ts';
import { defineRoute, type AnyRoute } from '../http/router.ts';
import { AlertsUnavailable, type Alerts } from './alerts.ts';
import { InputError, parseSubscriptionInput } from './subscriptionInput.ts';

/** Which Alerts the admin routes act on: none while the board loads, or with ALERTS=0. */
export class AlertsGate {
  private alerts: Alerts | null = null;
  private reason = 'the board is still loading';

  open(alerts: Alerts): void {
    this.alerts = alerts;
  }

  shut(reason: string): void {
    this.alerts = null;
    this.reason = reason;
  }

  take(): Alerts {
    if (this.alerts === null) throw new HttpError('not_ready', `webhook alerts are not available: ${this.reason}`);
    return this.alerts;
  }
}

const JSON_TYPE = 'application/json';
const MAX_BODY = 256 * 1024;

function inputOf(req: RouteRequest, create: boolean) {
  try {
    return parseSubscriptionInput(req.body, create);
  } catch (error) {
    if (error instanceof InputError) throw invalidParameter(error.field, error.message, error.validValues);
    throw error;
  }
}

const missing = (id: string) => notFound(`no webhook subscription ${id}`, 'id');

/** The delivery thread could not answer (restarting, shutting down): 503 not_ready, like the gate's. */
function unavailableAs503(error: unknown): never {
  if (error instanceof AlertsUnavailable) throw new HttpError('not_ready', `webhook alerts are not available: ${error.message}`);
  throw error;
}

/**
 * The answer of an operation the delivery thread carries out: the envelope around its
 * data once it answers, 503 not_ready while the thread is unavailable.
 */
function answer(req: RouteRequest, work: Promise<readonly unknown[]>, nextCursor: string | null = null): PendingLargeBodyResult {
  const body = work.then(
    (data) => ({ kind: 'document' as const, body: envelopeFromData(data, { updated: req.now, nextCursor }) }),
    unavailableAs503,
  );
  return { kind: 'pending', body };
}

export function alertsAdminRoutes(gate: AlertsGate): AnyRoute[] {
  const common = { auth: 'key' as const, response: 'WebhookSubscription', documented: false };
  const post = { ...common, method: 'POST' as const, contentTypes: [JSON_TYPE], maxBodyBytes: MAX_BODY };
  /** The subscription, or 404 when there is none. */
  const found = <T>(id: string, value: T | null): T => {
    if (value === null) throw missing(id);
    return value;
  };
  return [
    defineRoute({
      ...common,
      path: '/alerts/v1/subscriptions',
      query: [],
      handle: (req) => answer(req, gate.take().list()),
    }),
    defineRoute({
      ...post,
      path: '/alerts/v1/subscriptions/create',
      query: [],
      handle: (req) => {
        const alerts = gate.take();
        const input = inputOf(req, true);
        return answer(req, alerts.create(input).then(({ subscription, secret }) => [{ ...subscription, secret }]));
      },
    }),
    defineRoute({
      ...common,
      path: '/alerts/v1/subscriptions/:id',
      query: [],
      handle: (req) => {
        const id = req.params.id!;
        return answer(req, gate.take().get(id).then((view) => [found(id, view)]));
      },
    }),
    defineRoute({
      ...post,
      path: '/alerts/v1/subscriptions/:id/update',
      query: [],
      handle: (req) => {
        const id = req.params.id!;
        const alerts = gate.take();
        const input = inputOf(req, false);
        return answer(req, alerts.update(id, input).then((view) => [found(id, view)]));
      },
    }),
    defineRoute({
      ...post,
      contentTypes: undefined,
      path: '/alerts/v1/subscriptions/:id/delete',
      query: [],
      handle: (req) => {
        const id = req.params.id!;
        const body = gate
          .take()
          .remove(id)
          .then(
            (removed) => {
              if (!removed) throw missing(id);
              return { kind: 'document' as const, body: Buffer.from(JSON.stringify({ success: true, deleted: id })) };
            },
            unavailableAs503,
          );
        return { kind: 'pending', body };
      },
    }),
    defineRoute({
      ...post,
      path: '/alerts/v1/subscriptions/:id/replay',
      query: [],
      handle: (req) => {
        const id = req.params.id!;
        const alerts = gate.take();
        const range = rangeOf(req.body);
        return answer(req, alerts.replay(id, range.from, range.to).then((count) => [{ subscriptionId: id, queued: found(id, count) }]));
      },
    }),
    defineRoute({
      ...post,
      contentTypes: undefined,
      path: '/alerts/v1/subscriptions/:id/retry',
      query: [],
      handle: (req) => {
        const id = req.params.id!;
        return answer(req, gate.take().retryNow(id).then((view) => [found(id, view)]));
      },
    }),
    defineRoute({
      ...common,
      path: '/alerts/v1/subscriptions/:id/dead-letters',
      query: [
        { name: 'after', kind: 'integer', minimum: 0, default: 0 },
        { name: 'limit', kind: 'integer', minimum: 1, maximum: 1000, default: 100 },
      ],
      handle: (req) => {
        const id = req.params.id!;
        const { after, limit } = req.query;
        const alerts = gate.take();
        // one more than asked says whether there is a next page; the keyset is the
        // delivery position, which the caller passes back as `after`
        const body = alerts.deadLetters(id, after, limit + 1).then(
          (letters) => {
            const all = found(id, letters);
            const more = all.length > limit;
            const data = more ? all.slice(0, limit) : all;
            return { kind: 'document' as const, body: envelopeFromData(data, { updated: req.now, nextCursor: more ? String(data[data.length - 1]!.pos) : null }) };
          },
          unavailableAs503,
        );
        return { kind: 'pending', body };
      },
    }),
  ];
}

function rangeOf(body: Buffer | undefined): { from: number; to: number } {
  let raw: unknown;
  try {
    raw = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    throw invalidParameter('body', 'the body must be a JSON object {"from": ..., "to": ...}');
  }
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const instant = (name: 'from' | 'to'): number => {
    const value = o[name];
    if (value === undefined) throw missingParameter(name, `${name} is required: an ISO-8601 instant or epoch milliseconds`);
    const parsed = typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : typeof value === 'string' ? parseInstantParam(value) : null;
    if (parsed === null) throw invalidParameter(name, `${name} must be an ISO-8601 instant or epoch milliseconds`);
    return parsed;
  };
  const from = instant('from');
  const to = instant('to');
  if (to < from) throw invalidParameter('to', 'to must not be before from');
  return { from, to };
}
