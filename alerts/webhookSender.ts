// One webhook POST: the signed body to the endpoint's URL over node:http(s), with a
// deadline for the whole exchange (connect, send, answer), a keep-alive agent shared by
// all endpoints (bounded sockets per origin) and at most 4 KiB of the answer kept (for
// the subscription's last error). Each endpoint has one request in flight (its worker
// keeps order), so the sockets per origin only bound endpoints that share a host and
// port. 2xx is delivered; anything else, a timeout or a
// network error is a failure the worker retries.
import http from 'node:http';
import https from 'node:https';
import { SIGNATURE_HEADER, signatureHeader } from './signing.ts';

export interface SendResult {
  ok: boolean;
  /** HTTP status, null when none came (network error, timeout). */
  status: number | null;
  /** Why it failed ('' when ok). */
  error: string;
}

export interface SendOptions {
  url: URL;
  secret: string;
  /** The body's pieces, sent one after another (no copy into one buffer; the signature covers them in order). */
  body: readonly Buffer[];
  timeoutMs: number;
  /** Headers beyond the signature (delivery id, attempt). */
  headers: Record<string, string>;
  /** Wall-clock seconds the signature carries. */
  unixSeconds: number;
}

const KEPT_ANSWER_BYTES = 4096;
const SOCKETS_PER_ORIGIN = 256;

/** Sends webhooks over its own keep-alive agents; close() drops their sockets. */
export class WebhookSender {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS_PER_ORIGIN, maxFreeSockets: SOCKETS_PER_ORIGIN });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: SOCKETS_PER_ORIGIN, maxFreeSockets: SOCKETS_PER_ORIGIN });

  send(options: SendOptions): Promise<SendResult> {
    return sendWebhook(options, options.url.protocol === 'https:' ? this.httpsAgent : this.httpAgent);
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function sendWebhook(options: SendOptions, agent: http.Agent): Promise<SendResult> {
  const { url, body } = options;
  let length = 0;
  for (const piece of body) length += piece.length;
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(length),
          'User-Agent': 'odds-engine-webhooks/1',
          [SIGNATURE_HEADER]: signatureHeader(options.secret, body, options.unixSeconds),
          ...options.headers,
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        response.on('data', (chunk: Buffer) => {
          if (keptBytes < KEPT_ANSWER_BYTES) {
            kept.push(chunk.subarray(0, KEPT_ANSWER_BYTES - keptBytes));
            keptBytes += Math.min(chunk.length, KEPT_ANSWER_BYTES - keptBytes);
          }
        });
        response.on('end', () => {
          const ok = status >= 200 && status < 300;
          finish({ ok, status, error: ok ? '' : `HTTP ${status}: ${Buffer.concat(kept).toString('utf8').slice(0, 500)}` });
        });
        response.on('error', (error) => finish({ ok: false, status, error: `answer broken off: ${error.message}` }));
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, status: null, error: `${error.code ?? 'error'}: ${error.message}` }));
    // corked: the pieces leave in one writev with the headers
    request.cork();
    for (const piece of body) request.write(piece);
    request.end();
  });
}

