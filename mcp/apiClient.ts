// How the MCP tools read: GET requests to the public API, with the agent's API key.
// The tools are a client of /api/v1, not a second query layer: every tool call is one
// API request (or, for the summary, a few), answered, validated, counted and
// rate-limited exactly as that request would be for the same key. In the process the
// requests go over loopback to the public port; the stdio server (mcp/stdio.ts) sends
// them to the service's URL.
import http from 'node:http';
import https from 'node:https';

export interface ApiReply {
  status: number;
  body: string;
}

export interface ApiClient {
  get(pathAndQuery: string): Promise<ApiReply>;
}

/** Largest API answer read (a page of 100 odds rows is ~60 KiB; the tools cap pages at 100). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export class HttpApiClient implements ApiClient {
  private readonly agent: http.Agent;

  /** base: e.g. http://127.0.0.1:8080 (a function when the port is known only later); key: sent as X-Api-Key, null for none. */
  constructor(
    private readonly base: () => string,
    private readonly key: string | null,
    agent?: http.Agent,
    private readonly timeoutMs = 30_000,
  ) {
    this.agent = agent ?? new http.Agent({ keepAlive: true, maxSockets: 8 });
  }

  get(pathAndQuery: string): Promise<ApiReply> {
    const url = new URL(pathAndQuery, this.base());
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.key !== null) headers['X-Api-Key'] = this.key;
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(url, { method: 'GET', headers, agent: secure ? undefined : this.agent, timeout: this.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_ANSWER_BYTES) {
            req.destroy(new Error(`the API answer to ${url.pathname} is over ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`the API did not answer ${url.pathname} within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
  }
}
