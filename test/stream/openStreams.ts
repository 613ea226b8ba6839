// Opening the push stream's doors from a chosen local address (127.0.0.x), with chosen
// headers, and reading a refusal's status and body: what the per-address limit tests need.
import http from 'node:http';
import { WebSocket } from 'ws';

export interface Opened {
  status: number;
  body: string;
  close(): void;
}

export interface OpenOptions {
  localAddress?: string;
  path?: string;
  headers?: Record<string, string>;
}

/** A WebSocket handshake to the stream: open (101), or the refusal's status and body. */
export function openSocket(port: number, localAddress = '127.0.0.1', headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/stream`, { perMessageDeflate: false, localAddress, headers });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, close: () => undefined }));
    });
    ws.once('open', () => resolve({ status: 101, body: '', close: () => ws.terminate() }));
    ws.once('error', (error) => (ws.readyState === WebSocket.CONNECTING ? reject(error) : undefined));
  });
}

/** An SSE request: open (200, the stream left running), or the refusal's status and body. */
export function openSse(port: number, localAddress = '127.0.0.1', path = '/api/v1/stream/sse?league=nba', headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, localAddress, agent: false, headers }, (res) => {
      if (res.statusCode === 200) {
        res.on('data', () => undefined);
        res.on('error', () => undefined);
        resolve({ status: 200, body: '', close: () => req.destroy() });
        return;
      }
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, close: () => undefined }));
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
  });
}
