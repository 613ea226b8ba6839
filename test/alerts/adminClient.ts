// The webhook admin API as a test talks to it: JSON over the ingest port with the bearer token.
import http from 'node:http';

export interface AdminReply {
  status: number;
  body: any;
}

export function admin(port: number, token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<AdminReply> {
  const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (payload !== null) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // left as text for the assertion to show
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(payload ?? undefined);
  });
}
