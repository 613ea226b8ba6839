// The ingest bench's feed, a child process so its event loop does not share the
// server's (task as JSON on stdin, result as JSON on stdout): keeps `inFlight` batches in flight over HTTP (msgpack bodies) or one
// WebSocket (binary msgpack messages) until `batches` are acknowledged, or sends
// one-change batches one at a time and times each acknowledgement.
import http from 'node:http';
import { pack } from 'msgpackr';
import { WebSocket } from 'ws';

export interface ClientTask {
  kind: 'http' | 'ws' | 'latency';
  port: number;
  token: string;
  ids: string[];
  batchSize: number;
  inFlight: number;
  batches: number;
}

export interface ClientResult {
  updates: number;
  ms: number;
  /** latency: every acknowledgement's round trip, ms. */
  latencies: number[];
  errors: string[];
}

const task = JSON.parse(await new Promise<string>((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk: Buffer) => (text += chunk.toString()));
  process.stdin.on('end', () => resolve(text));
})) as ClientTask;

/** Distinct bodies, cycled: batch k ticks ids[(k*size + i) % n] to a price that moves with k. */
function bodies(count: number): Buffer[] {
  const out: Buffer[] = [];
  for (let k = 0; k < count; k++) {
    const changes = [];
    for (let i = 0; i < task.batchSize; i++) {
      const id = task.ids[(k * task.batchSize + i) % task.ids.length]!;
      changes.push({ op: 'price', id, priceAmerican: -105 - ((k * 7 + i) % 60) });
    }
    out.push(pack(changes));
  }
  return out;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: task.inFlight });

function post(body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: task.port, path: '/ingest/v1/batches', method: 'POST', agent, headers: { Authorization: `Bearer ${task.token}`, 'Content-Type': 'application/msgpack', 'Content-Length': String(body.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function overHttp(): Promise<ClientResult> {
  const set = bodies(16);
  let next = 0;
  let acked = 0;
  const errors: string[] = [];
  const started = performance.now();
  const lane = async () => {
    while (next < task.batches) {
      const k = next++;
      try {
        await post(set[k % set.length]!);
        acked++;
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: task.inFlight }, lane));
  return { updates: acked * task.batchSize, ms: performance.now() - started, latencies: [], errors: errors.slice(0, 5) };
}

async function overSocket(): Promise<ClientResult> {
  const set = bodies(16);
  const ws = new WebSocket(`ws://127.0.0.1:${task.port}/ingest/v1/ws`, { headers: { Authorization: `Bearer ${task.token}` } });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let sent = 0;
  let acked = 0;
  const errors: string[] = [];
  const started = performance.now();
  return new Promise((resolve) => {
    const top = () => {
      while (sent < task.batches && sent - acked - errors.length < task.inFlight) ws.send(set[sent++ % set.length]!);
    };
    ws.on('message', (data: Buffer) => {
      const reply = JSON.parse(data.toString('utf8'));
      if ('ack' in reply) acked++;
      else errors.push(reply.detail);
      if (acked + errors.length === task.batches) {
        const ms = performance.now() - started;
        ws.close();
        resolve({ updates: acked * task.batchSize, ms, latencies: [], errors: errors.slice(0, 5) });
      } else top();
    });
    top();
  });
}

async function latency(): Promise<ClientResult> {
  const latencies: number[] = [];
  const errors: string[] = [];
  const started = performance.now();
  for (let k = 0; k < task.batches; k++) {
    const body = pack([{ op: 'price', id: task.ids[k % task.ids.length], priceAmerican: -110 - (k % 40) }]);
    const t0 = performance.now();
    try {
      await post(body);
      latencies.push(performance.now() - t0);
    } catch (error) {
      errors.push((error as Error).message);
    }
  }
  return { updates: latencies.length, ms: performance.now() - started, latencies, errors: errors.slice(0, 5) };
}

const result = task.kind === 'http' ? await overHttp() : task.kind === 'ws' ? await overSocket() : await latency();
agent.destroy();
process.stdout.write(JSON.stringify(result));
