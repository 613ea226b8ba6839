// The delivery thread (a worker_threads Worker that alerts.ts starts): it owns
// alerts.db and runs the DeliveryHost, so the outbox's writes and fsyncs, a thousand
// endpoints' queues, their HTTP requests, the bodies, signatures, backoff and dead
// letters never take the main thread's time, which answers ingest and reads. Messages
// are those of threadProtocol.ts, handled in arrival order: a tick's events are in the
// outbox before any later call is answered.
import { parentPort, workerData } from 'node:worker_threads';
import { DeliveryHost, type Log } from './deliveryHost.ts';
import { readTick } from './tickEvents.ts';
import type { CallName, FromThread, HostCalls, ThreadData, ToThread } from './threadProtocol.ts';
import { lowerOwnPriority, ownThreadId, ownUsage } from './threadUsage.ts';

const port = parentPort!;
const { config } = workerData as ThreadData;
const send = (message: FromThread) => port.postMessage(message);
const log: Log = (level, fields, line) => send({ kind: 'log', level, fields, line });

// below the main thread's priority if ALERTS_THREAD_NICE says so: where the CPU is short
// the fan-out's work (bodies, signatures, HTTP) then waits for the write path's
// acknowledgements, not the other way round, and falls behind; an idle core still runs
// it at full speed
const nice = lowerOwnPriority(config.threadNice);
const tid = ownThreadId();

let host: DeliveryHost;
try {
  host = new DeliveryHost(config, log);
} catch (error) {
  send({ kind: 'failed', error: error instanceof Error ? error.message : String(error) });
  port.close();
  throw error;
}

const calls: { [K in CallName]: (...args: never[]) => unknown } = {
  list: () => host.list(),
  get: (id: string) => host.get(id),
  create: (...args: Parameters<HostCalls['create']>) => host.create(...args),
  update: (...args: Parameters<HostCalls['update']>) => host.update(...args),
  remove: (id: string) => host.remove(id),
  replay: (...args: Parameters<HostCalls['replay']>) => host.replay(...args),
  retryNow: (id: string) => host.retryNow(id),
  deadLetters: (...args: Parameters<HostCalls['deadLetters']>) => host.deadLetters(...args),
  stats: () => ({ ...host.stats, walSyncs: host.walSyncs, thread: ownUsage(), nice, tid }),
  metrics: () => host.metrics(),
};

function accept(bodies: Uint8Array, createdAt: Float64Array): void {
  host.accept(readTick(bodies, createdAt));
}

port.on('message', (message: ToThread) => {
  switch (message.kind) {
    case 'events':
      try {
        accept(message.bodies, message.createdAt);
      } catch (error) {
        log('error', { event: 'alerts_events_refused', detail: String(error) }, 'a batch of alert events could not be read by the delivery thread; it was not queued');
      }
      return;
    case 'prune':
      host.prune(message.cutoff);
      return;
    case 'call': {
      const { id, name, args } = message;
      Promise.resolve()
        .then(() => (calls[name] as (...a: unknown[]) => unknown)(...args))
        .then(
          (value) => send({ kind: 'reply', id, value }),
          (error: unknown) => send({ kind: 'reply', id, error: error instanceof Error ? error.message : String(error) }),
        );
      return;
    }
    case 'close':
      void host.close().finally(() => {
        send({ kind: 'closed' });
        port.close();
      });
      return;
  }
});

host.start();
send({ kind: 'ready', followed: host.followed() });
