// The webhook alerts on /metrics (the ingest port's registry), asked of the delivery
// thread once per scrape (every metric below reads the same answer):
//
//   odds_alerts_subscriptions{state}          gauge    subscriptions by delivery state: idle, window, sending, backoff, disabled
//   odds_alerts_pending_events                gauge    events waiting in the enabled subscriptions' queues
//   odds_alerts_oldest_pending_seconds        gauge    how long the oldest event at the head of a queue has waited
//   odds_alerts_events_written_total          counter  events written to the outbox (since the start)
//   odds_alerts_deliveries_queued_total       counter  deliveries queued (an event times the subscriptions it matched)
//   odds_alerts_delivered_events_total        counter  events delivered (each subscription's count, over its life)
//   odds_alerts_requests_total{outcome}       counter  webhook requests: delivered (2xx), failed (retried later)
//   odds_alerts_dead_lettered_events_total    counter  events moved to the dead letters
//   odds_alerts_thread_restarts_total         counter  times the delivery thread was started again after it died
//
// While the thread cannot answer (restarting) the alerts' metrics are left out of the
// scrape, and the restarts counter says why.
import type { Metric, Registry } from 'prom-client';
import type { Alerts } from './alerts.ts';
import type { DeliveryMetrics } from './deliveryHost.ts';

interface Row {
  labels: Record<string, string>;
  value: number;
}

const STATES = ['idle', 'window', 'sending', 'backoff', 'disabled'] as const;

export function registerAlertsMetrics(registry: Registry, alerts: Alerts): void {
  // one question to the thread per scrape, shared by the metrics read in it
  let asked: { at: number; answer: Promise<DeliveryMetrics | null> } | null = null;
  const current = (): Promise<DeliveryMetrics | null> => {
    const now = performance.now();
    if (asked === null || now - asked.at > 250) asked = { at: now, answer: alerts.metrics().catch(() => null) };
    return asked.answer;
  };
  const register = (name: string, help: string, type: 'gauge' | 'counter', values: (m: DeliveryMetrics) => Row[], always = false) => {
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      collect() {},
      reset() {},
      async get() {
        const m = always ? null : await current();
        const rows = always ? [{ labels: {}, value: alerts.restarts }] : m === null ? [] : values(m);
        return { name, help, type, aggregator: 'sum', values: rows };
      },
    };
    registry.registerMetric(metric as unknown as Metric);
  };
  const one = (value: number): Row[] => [{ labels: {}, value }];
  register('odds_alerts_subscriptions', 'Webhook subscriptions by delivery state.', 'gauge', (m) => STATES.map((state) => ({ labels: { state }, value: m.subscriptions[state] ?? 0 })));
  register('odds_alerts_pending_events', 'Alert events waiting in the enabled webhook subscriptions\' queues (a queue past its memory cap counts as 10,000).', 'gauge', (m) => one(m.pendingEvents));
  register('odds_alerts_oldest_pending_seconds', 'Seconds the oldest alert event at the head of a webhook queue has waited since it was written (0: none waiting).', 'gauge', (m) => one(m.oldestPendingSeconds));
  register('odds_alerts_events_written_total', 'Alert events written to the outbox.', 'counter', (m) => one(m.eventsWritten));
  register('odds_alerts_deliveries_queued_total', 'Webhook deliveries queued (each event times the subscriptions it matched).', 'counter', (m) => one(m.deliveriesQueued));
  register('odds_alerts_delivered_events_total', 'Alert events delivered (acknowledged 2xx), over the subscriptions\' lives.', 'counter', (m) => one(m.deliveredEvents));
  register('odds_alerts_requests_total', 'Webhook requests by outcome: delivered (2xx) or failed (another status, a timeout, a network error; retried).', 'counter', (m) => [
    { labels: { outcome: 'delivered' }, value: m.deliveredRequests },
    { labels: { outcome: 'failed' }, value: m.failedRequests },
  ]);
  register('odds_alerts_dead_lettered_events_total', 'Alert events moved to the dead letters after failing for the whole retry period.', 'counter', (m) => one(m.deadLetteredEvents));
  register('odds_alerts_thread_restarts_total', 'Times the webhook delivery thread was started again after it died.', 'counter', () => [], true);
}
