// Webhook receivers for the alert tests: real node:http servers on 127.0.0.1 that check
// every request's signature (alerts/signing.ts' verifySignature, what the docs' snippet
// does), remember each event id once in the order first received (what a receiver that
// dedupes on the idempotency id keeps), and behave as asked: answer at once, fail a
// share of requests, answer slowly (past the sender's timeout now and then), or be down
// (port closed) until up() listens again on the same port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../alerts/signing.ts';

export interface ReceivedEvent {
  id: string;
  type: string;
  createdAt: string;
  data: any;
}

export interface ReceiverBehaviour {
  /** Share of requests answered 500 (after the body was read), from a seeded sequence. */
  failShare?: number;
  /** Milliseconds before answering: a fixed delay, or [min, max] drawn per request. */
  delayMs?: number | [number, number];
}

export class Receiver {
  readonly firstSeen: ReceivedEvent[] = [];
  private readonly seen = new Set<string>();
  requests = 0;
  answeredOk = 0;
  badSignatures = 0;
  /** Events received again after a first receipt (at-least-once redeliveries). */
  duplicates = 0;
  /** Requests whose sender hung up before the answer was written (its timeout). */
  abandoned = 0;
  secret = '';
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  private seed = 12345;
  port = 0;

  constructor(readonly behaviour: ReceiverBehaviour = {}) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  private random(): number {
    // xorshift: the same failures each run
    this.seed ^= this.seed << 13;
    this.seed ^= this.seed >>> 17;
    this.seed ^= this.seed << 5;
    return ((this.seed >>> 0) % 1_000_000) / 1_000_000;
  }

  async up(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests++;
        const body = Buffer.concat(chunks);
        const signature = String(req.headers['odds-signature'] ?? '');
        if (!verifySignature(this.secret, body, signature, Math.floor(Date.now() / 1000))) {
          this.badSignatures++;
          res.writeHead(400).end('bad signature');
          return;
        }
        const fail = this.random() < (this.behaviour.failShare ?? 0);
        const d = this.behaviour.delayMs ?? 0;
        const delay = typeof d === 'number' ? d : d[0] + this.random() * (d[1] - d[0]);
        // recorded on receipt: a receiver that then times out or fails has still seen them
        if (!fail) this.record(JSON.parse(body.toString('utf8')) as { events: ReceivedEvent[] });
        res.on('close', () => {
          if (!res.writableFinished) this.abandoned++;
        });
        setTimeout(() => {
          if (res.destroyed) return;
          if (fail) res.writeHead(500).end('try again');
          else {
            this.answeredOk++;
            res.writeHead(204).end();
          }
        }, delay);
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private record(batch: { events: ReceivedEvent[] }): void {
    for (const event of batch.events) {
      if (this.seen.has(event.id)) {
        this.duplicates++;
        continue;
      }
      this.seen.add(event.id);
      this.firstSeen.push(event);
    }
  }

  has(id: string): boolean {
    return this.seen.has(id);
  }

  /** Closes the port and drops open connections: the endpoint is down. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A receiver that listens once to learn a free port, then is down until up(). */
export async function downReceiver(behaviour: ReceiverBehaviour = {}): Promise<Receiver> {
  const r = new Receiver(behaviour);
  await r.up();
  await r.down();
  return r;
}
