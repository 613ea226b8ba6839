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
import type { RouteRequest } from '../http/request.ts';
import { defineRoute, type AnyRoute } from '../http/router.ts';
import type { Alerts } from './alerts.ts';
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

export function alertsAdminRoutes(gate: AlertsGate): AnyRoute[] {
  const common = { auth: 'key' as const, response: 'WebhookSubscription', documented: false };
  const post = { ...common, method: 'POST' as const, contentTypes: [JSON_TYPE], maxBodyBytes: MAX_BODY };
  return [
    defineRoute({
      ...common,
      path: '/alerts/v1/subscriptions',
      query: [],
      handle: (req) => {
        const data = gate.take().list();
        return { kind: 'data', data, updated: req.now };
      },
    }),
    defineRoute({
      ...post,
      path: '/alerts/v1/subscriptions/create',
      query: [],
      handle: (req) => {
        const alerts = gate.take();
        const { subscription, secret } = alerts.create(inputOf(req, true));
        return { kind: 'data', data: [{ ...subscription, secret }], updated: req.now };
      },
    }),
    defineRoute({
      ...common,
      path: '/alerts/v1/subscriptions/:id',
      query: [],
      handle: (req) => {
        const view = gate.take().get(req.params.id!);
        if (view === null) throw missing(req.params.id!);
        return { kind: 'data', data: [view], updated: req.now };
      },
    }),
    defineRoute({
      ...post,
      path: '/alerts/v1/subscriptions/:id/update',
      query: [],
      handle: (req) => {
        const view = gate.take().update(req.params.id!, inputOf(req, false));
        if (view === null) throw missing(req.params.id!);
        return { kind: 'data', data: [view], updated: req.now };
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
          .then((removed) => {
            if (!removed) throw missing(id);
            return { kind: 'document' as const, body: Buffer.from(JSON.stringify({ success: true, deleted: id })) };
          });
        return { kind: 'pending', body };
      },
    }),
    defineRoute({
      ...post,
      path: '/alerts/v1/subscriptions/:id/replay',
      query: [],
      handle: (req) => {
        const range = rangeOf(req.body);
        const count = gate.take().replay(req.params.id!, range.from, range.to);
        if (count === null) throw missing(req.params.id!);
        return { kind: 'data', data: [{ subscriptionId: req.params.id!, queued: count }], updated: req.now };
      },
    }),
    defineRoute({
      ...post,
      contentTypes: undefined,
      path: '/alerts/v1/subscriptions/:id/retry',
      query: [],
      handle: (req) => {
        const view = gate.take().retryNow(req.params.id!);
        if (view === null) throw missing(req.params.id!);
        return { kind: 'data', data: [view], updated: req.now };
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
        const letters = gate.take().deadLetters(req.params.id!, req.query.after, req.query.limit + 1);
        if (letters === null) throw missing(req.params.id!);
        const more = letters.length > req.query.limit;
        const data = more ? letters.slice(0, req.query.limit) : letters;
        // the keyset is the delivery position, which the caller passes back as `after`
        return { kind: 'data', data, nextCursor: more ? String(data[data.length - 1]!.pos) : null, updated: req.now };
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
