// Webhook catch-up: every endpoint far behind at once, as after an outage of the
// receivers or a restart of the service. An outbox (alerts.db in a temp dir) holds
// ALERTS_CATCHUP_EVENTS line moves (default 3,000) that all of ALERTS_CATCHUP_ENDPOINTS
// subscriptions (default 1,000) still owe, on the local receivers of the fan-out bench
// (bench/webhookReceivers.ts, a child process, 8 ports); then a delivery host starts on
// that file, as the delivery thread does after a restart (nothing in memory: every
// queue is read back from the outbox), and delivers it all. Measured: deliveries
// received per second, requests per second, and the CPU time of this process (where the
// host runs) per thousand deliveries, which depends less on the other load of a shared
// machine than the rate does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AlertEvent, LineMoveAlert } from '../alerts/alertEvent.ts';
import { openAlertsDatabase } from '../alerts/alertsDatabase.ts';
import type { AlertsConfig } from '../alerts/alertsConfig.ts';
import { AlertsStore, type Subscription } from '../alerts/alertsStore.ts';
import { DEFAULT_RETRY } from '../alerts/backoff.ts';
import { DeliveryHost } from '../alerts/deliveryHost.ts';
import { parseFilters } from '../alerts/filters.ts';
import { startReceivers } from './alerts.bench.ts';

type Measurements = Record<string, number | string>;
const ENDPOINTS = Number(process.env.ALERTS_CATCHUP_ENDPOINTS ?? 1000);
const EVENTS = Number(process.env.ALERTS_CATCHUP_EVENTS ?? 3000);
const WATCHED = 100;
const NOW = Date.parse('2026-11-21T12:00:00Z');
const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;

function lineMove(i: number): { event: AlertEvent; body: string } {
  const data: LineMoveAlert = {
    oddsId: `odds-${i % WATCHED}`,
    eventId: `event-${(i % WATCHED) >> 2}`,
    league: 'nba',
    sportsbook: 'draftkings',
    from: { priceAmerican: -110, priceDecimal: 1.909, dfsMultiplier: null, line: -3.5, suspended: false, live: true },
    to: { priceAmerican: -115 - (i % 7), priceDecimal: 1.87, dfsMultiplier: null, line: -3.5, suspended: false, live: true },
    updated: new Date(NOW + i).toISOString(),
  };
  const event: AlertEvent = { id: `evt_${String(i).padStart(12, '0')}-catchup`, type: 'line.moved', createdAt: NOW + i, data };
  return { event, body: JSON.stringify({ id: event.id, type: event.type, createdAt: new Date(event.createdAt).toISOString(), data }) };
}

export async function benchAlertsCatchUp(): Promise<Measurements> {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-catchup-'));
  const dbPath = join(dir, 'alerts.db');
  const receivers = await startReceivers();
  const out: Measurements = { endpoints: ENDPOINTS, 'events each endpoint is behind': EVENTS, 'deliveries owed': ENDPOINTS * EVENTS };
  let host: DeliveryHost | null = null;
  try {
    const store = new AlertsStore(openAlertsDatabase(dbPath));
    const filters = parseFilters([{ type: 'line_move', oddsIds: Array.from({ length: WATCHED }, (_, i) => `odds-${i}`) }]);
    for (let i = 0; i < ENDPOINTS; i++) {
      const s: Subscription = {
        id: `sub_${String(i).padStart(5, '0')}`, url: `http://127.0.0.1:${receivers.ports[i % receivers.ports.length]}/hook/${i}`, secret: `whsec_catchup_${i}`, filters,
        batchWindowMs: 0, maxBatchEvents: 1000, description: null, enabled: true, createdAt: NOW, updatedAt: NOW,
        cursor: 0, attempts: 0, failingSince: null, nextAttemptAt: null, lastStatus: null, lastError: null, lastDeliveredAt: null, deliveredEvents: 0,
      };
      store.insertSubscription(s);
    }
    for (let i = 0; i < EVENTS; i += 100) store.append(Array.from({ length: Math.min(100, EVENTS - i) }, (_, k) => lineMove(i + k)));
    store.close();

    const config: AlertsConfig = { enabled: true, dbPath, tickMs: 100, timeoutMs: 10_000, maxInFlight: 1024, retry: DEFAULT_RETRY, retentionMs: 7 * 24 * 3600 * 1000, threadNice: 0 };
    const owed = ENDPOINTS * EVENTS;
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    host = new DeliveryHost(config, () => {});
    host.start();
    let now = await receivers.stats();
    while (now.events < owed && performance.now() - started < 180_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      now = await receivers.stats();
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    out['deliveries received / owed'] = `${now.events} / ${owed}${now.events < owed ? ' (stopped at 180 s)' : ''}`;
    out['catch-up time (s)'] = round(seconds, 2);
    out['deliveries received /s'] = Math.round(now.events / seconds);
    out['webhook requests /s'] = Math.round(now.requests / seconds);
    out['sender CPU per 1,000 deliveries (ms, user + system)'] = round((cpu.user + cpu.system) / 1000 / (now.events / 1000), 2);
  } finally {
    await host?.close();
    receivers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
