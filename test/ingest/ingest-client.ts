// A feed's side of the ingest listener, for tests and the bench: POST a batch (NDJSON or
// msgpack) with the bearer token, or hold a WebSocket whose replies come back in the
// order the batches were sent.
import http from 'node:http';
import { pack } from 'msgpackr';
import { WebSocket } from 'ws';

export interface IngestReply {
  status: number;
  /** The parsed JSON body. */
  body: any;
  contentType: string;
}

export function ndjson(changes: readonly unknown[]): Buffer {
  return Buffer.from(changes.map((c) => JSON.stringify(c)).join('\n') + '\n');
}

export function msgpack(changes: readonly unknown[]): Buffer {
  return pack(changes);
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** POSTs one batch body to /ingest/v1/batches. token null: no Authorization header. */
export function postBatch(port: number, token: string | null, body: Buffer, contentType = 'application/x-ndjson', extraHeaders: Record<string, string> = {}): Promise<IngestReply> {
  const headers: Record<string, string> = { 'Content-Type': contentType, 'Content-Length': String(body.length), ...extraHeaders };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    let answered = false;
    let failure: Error | null = null;
    const req = http.request({ host: '127.0.0.1', port, path: '/ingest/v1/batches', method: 'POST', headers, agent: keepAlive }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // left as text: the assertion on it says what came back
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, contentType: String(res.headers['content-type'] ?? '') });
      });
      res.on('error', reject);
    });
    // the server may answer (413, 401) and close before the body is all sent: a write
    // error then comes with an answer, so only a request closed without one fails
    req.on('error', (error: Error) => (failure ??= error));
    req.on('close', () => {
      if (!answered) reject(failure ?? new Error('the connection closed without an answer'));
    });
    req.end(body);
  });
}

export interface IngestSocket {
  ws: WebSocket;
  /** Sends one batch; resolves with its reply (replies arrive in send order). */
  send(batch: Buffer | string): Promise<any>;
  /** Resolves with the close code once the server closes the connection. */
  closed: Promise<number>;
  close(): void;
}

export function openIngestSocket(port: number, token: string | null): Promise<IngestSocket> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token === null ? {} : { Authorization: `Bearer ${token}` };
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ingest/v1/ws`, { headers });
    const waiting: ((reply: any) => void)[] = [];
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('message', (data: Buffer) => waiting.shift()?.(JSON.parse(data.toString('utf8'))));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`handshake refused: ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        ws,
        send(batch) {
          return new Promise((done) => {
            waiting.push(done);
            ws.send(batch, { binary: typeof batch !== 'string' });
          });
        },
        closed,
        close: () => ws.close(),
      }),
    );
  });
}
