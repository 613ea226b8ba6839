// A raw-socket HTTP/1.x client for conformance tests: writes exactly the bytes given
// (malformed ones included) and reads the responses as they come, so a test sees what
// the server put on the wire, in order, and whether it closed the connection.
import net from 'node:net';

export interface RawResponse {
  /** 'HTTP/1.1' or 'HTTP/1.0'. */
  version: string;
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server closed the connection (before the deadline). */
  closed: boolean;
  /** Milliseconds from writing until the last awaited response ended (or the close, or the deadline). */
  ms: number;
  /** Bytes after the last complete response (a cut response, or garbage). */
  rest: Buffer;
}

export interface RawOptions {
  /** Responses to wait for; with waitClose, also the close after them. Default 1. */
  responses?: number;
  /** Wait until the server closes the connection (after the responses). */
  waitClose?: boolean;
  /** Give up after this long (the exchange then reports what arrived). Default 1000. */
  deadlineMs?: number;
  /** Methods of the requests sent, in order, for HEAD responses (no body). */
  methods?: readonly string[];
  /** Written after the first part, as a separate write. */
  parts?: readonly (string | Buffer)[];
}

/** Sends bytes on a fresh connection to 127.0.0.1:port and collects the answers. */
export function rawHttp(port: number, bytes: string | Buffer, options: RawOptions = {}): Promise<RawExchange> {
  const want = options.responses ?? 1;
  const deadline = options.deadlineMs ?? 1000;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    let closed = false;
    let settled = false;
    const started = performance.now();
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const consumed = parseResponses(data, responses, options.methods ?? [], closed);
      socket.destroy();
      resolve({ responses, closed, ms: performance.now() - started, rest: data.subarray(consumed) });
    };
    const timer = setTimeout(settle, deadline);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const parsed: RawResponse[] = [];
      parseResponses(data, parsed, options.methods ?? [], false);
      if (parsed.length >= want && !options.waitClose) {
        settle();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      settle();
    });
    socket.write(bytes);
    for (const part of options.parts ?? []) socket.write(part);
  });
}

/** Parses complete responses from data into out; returns the bytes consumed. */
function parseResponses(data: Buffer, out: RawResponse[], methods: readonly string[], atClose: boolean): number {
  let at = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', at, 'latin1');
    if (headEnd === -1) return at;
    const lines = data.toString('latin1', at, headEnd).split('\r\n');
    const match = /^(HTTP\/1\.[01]) (\d{3})/.exec(lines[0]!);
    if (match === null) return at;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const status = Number(match[2]);
    let bodyStart = headEnd + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      at = bodyStart;
      continue;
    }
    const method = methods[out.length] ?? 'GET';
    let body: Buffer;
    if (method === 'HEAD' || status === 204 || status === 304 || status === 101) body = Buffer.alloc(0);
    else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (data.length < bodyStart + length) return at;
      body = data.subarray(bodyStart, bodyStart + length);
      bodyStart += length;
    } else if ((headers['transfer-encoding'] ?? '').includes('chunked')) {
      const parts: Buffer[] = [];
      let i = bodyStart;
      for (;;) {
        const lineEnd = data.indexOf('\r\n', i, 'latin1');
        if (lineEnd === -1) return at;
        const size = Number.parseInt(data.toString('latin1', i, lineEnd), 16);
        if (size === 0) {
          const end = data.indexOf('\r\n\r\n', lineEnd, 'latin1');
          if (end === -1) return at;
          bodyStart = end + 4;
          break;
        }
        if (data.length < lineEnd + 2 + size + 2) return at;
        parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        i = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      if (!atClose) return at;
      body = data.subarray(bodyStart);
      bodyStart = data.length;
    }
    out.push({ version: match[1]!, status, headers, body });
    at = bodyStart;
    if (status === 101) return at;
  }
}
