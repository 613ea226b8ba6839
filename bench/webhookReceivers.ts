// The alerts bench's webhook endpoints, in a child process so their work does not share
// the server's event loop: node:http servers on `ports` loopback ports (the task as JSON
// on stdin's first line), each answering 204 at once and counting the events of every
// batch; the line "stats" on stdin prints {events, requests} on stdout. Signatures are
// not checked here (the tests check them); the count is what the bench needs. It is
// taken by searching the raw bytes for each event's start ({"id":"evt_, the producer's
// ids), not by decoding and parsing every body: parsing 100,000 events/s kept this
// process 70-95% busy on the shared 2-core machine, so the receivers, not the sender,
// set the rate the bench measured.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';

const EVENT_START = Buffer.from('{"id":"evt_');

/** Events in a delivery body: {"subscriptionId","deliveryId","events":[{"id":"evt_...",...},...]}. */
function countEvents(body: Buffer): number {
  let n = 0;
  for (let at = body.indexOf(EVENT_START); at >= 0; at = body.indexOf(EVENT_START, at + EVENT_START.length)) n++;
  return n;
}

let events = 0;
let requests = 0;
const lines = createInterface({ input: process.stdin });
let started = false;

lines.on('line', async (line) => {
  if (!started) {
    started = true;
    const { ports } = JSON.parse(line) as { ports: number };
    const open: number[] = [];
    for (let i = 0; i < ports; i++) {
      const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          requests++;
          events += countEvents(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      open.push((server.address() as AddressInfo).port);
    }
    process.stdout.write(`${JSON.stringify({ ports: open })}\n`);
    return;
  }
  if (line === 'stats') process.stdout.write(`${JSON.stringify({ events, requests })}\n`);
});
lines.on('close', () => process.exit(0));
