// Decides, from a request's head, whether uWebSockets.js answers it right (front.ts).
// uWS's parser holds, closes or misanswers many legal requests (docs: transports), so
// only the plain shape it is known to serve goes to it: everything else goes to
// node:http, which answers every legal HTTP/1.x request and refuses the rest with a
// status. The rules are deliberately narrower than what uWS accepts; they describe
// what every ordinary HTTP/1.1 client (curl, browsers, fetch, wrk, nginx with
// `proxy_http_version 1.1`) sends, so the fast path loses nothing.

/** Methods uWS routes through `any` on every build (20.30 closes the connection on extension methods). */
const UWS_METHODS: ReadonlyMap<string, { head: boolean; body: boolean }> = new Map([
  ['GET', { head: false, body: false }],
  ['HEAD', { head: true, body: false }],
  ['POST', { head: false, body: true }],
  ['OPTIONS', { head: false, body: false }],
]);

/**
 * Largest head sent to uWS. uWS 20.30 serves heads up to its 4 KiB header buffer and
 * larger ones inconsistently; node:http answers bigger heads (414 past 8 KiB of target,
 * 431 past 16 KiB of head).
 */
export const UWS_MAX_HEAD_BYTES = 4096;
/** Most header lines sent to uWS: 20.30 holds the connection from 49 on. */
export const UWS_MAX_HEADERS = 40;

const CR = 13;
const LF = 10;
const SP = 32;
const COLON = 58;

export type HeadScan =
  /** The head is not complete yet (and still small enough for uWS). */
  | { kind: 'incomplete' }
  /** Anything uWS might not answer right: node:http gets the connection. */
  | { kind: 'node'; reason: string }
  | {
      kind: 'uws';
      /** Offset just past the head's final CRLF CRLF. */
      headEnd: number;
      /** Content-Length of the body that follows (0 when none). */
      bodyLength: number;
      /** A HEAD request: its response has no body whatever its Content-Length says. */
      head: boolean;
      /** An Upgrade request: a 101 answer turns the connection into a tunnel. */
      upgrade: boolean;
    };

const INCOMPLETE: HeadScan = { kind: 'incomplete' };

function node(reason: string): HeadScan {
  return { kind: 'node', reason };
}

/** Lower-case ASCII letters, digits and '-': the header names uWS 20.30 accepts (it holds on '_' or '~'). */
function plainNameByte(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45;
}

/** Visible ASCII, space and tab: uWS 20.30 returns '' for a header holding any other byte. */
function plainValueByte(c: number): boolean {
  return (c >= 32 && c <= 126) || c === 9;
}

/** Case-insensitive compare of buf[start, end) with a lower-case ASCII name. */
function nameIs(buf: Buffer, start: number, end: number, lower: string): boolean {
  if (end - start !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    if ((buf[start + i]! | 0x20) !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Scans the request head starting at `start` of `buf`. Never throws; reads only the
 * head's bytes.
 */
export function scanRequestHead(buf: Buffer, start: number): HeadScan {
  const limit = Math.min(buf.length, start + UWS_MAX_HEAD_BYTES);
  // Request line: METHOD SP origin-form SP HTTP/1.1 CRLF
  let i = start;
  while (i < limit && buf[i]! >= 65 && buf[i]! <= 90) i++;
  if (i === limit) return buf.length - start >= UWS_MAX_HEAD_BYTES ? node('head over the uWS limit') : INCOMPLETE;
  if (buf[i] !== SP) return node('method');
  const method = UWS_METHODS.get(buf.toString('latin1', start, i));
  if (method === undefined) return node('method');
  i++;
  if (i < limit && buf[i] !== 47) return node('request target not in origin form');
  while (i < limit && buf[i]! > SP && buf[i]! < 127) i++;
  if (i === limit) return buf.length - start >= UWS_MAX_HEAD_BYTES ? node('head over the uWS limit') : INCOMPLETE;
  if (buf[i] !== SP) return node('request target');
  i++;
  if (limit - i < 10) return buf.length - start >= UWS_MAX_HEAD_BYTES ? node('head over the uWS limit') : INCOMPLETE;
  // "HTTP/1.1\r\n"
  if (
    buf[i] !== 72 || buf[i + 1] !== 84 || buf[i + 2] !== 84 || buf[i + 3] !== 80 || buf[i + 4] !== 47 ||
    buf[i + 5] !== 49 || buf[i + 6] !== 46 || buf[i + 7] !== 49 || buf[i + 8] !== CR || buf[i + 9] !== LF
  ) {
    return node('not HTTP/1.1');
  }
  i += 10;
  let headers = 0;
  let hosts = 0;
  let bodyLength = -1;
  const upgrade = false;
  for (;;) {
    if (i + 1 >= limit) return buf.length - start >= UWS_MAX_HEAD_BYTES ? node('head over the uWS limit') : INCOMPLETE;
    if (buf[i] === CR) {
      if (buf[i + 1] !== LF) return node('bare CR');
      i += 2;
      break;
    }
    const nameStart = i;
    while (i < limit && plainNameByte(buf[i]!)) i++;
    if (i === limit) return buf.length - start >= UWS_MAX_HEAD_BYTES ? node('head over the uWS limit') : INCOMPLETE;
    if (buf[i] !== COLON || i === nameStart) return node('header name');
    const nameEnd = i;
    i++;
    const valueStart = i;
    while (i < limit && plainValueByte(buf[i]!)) i++;
    if (i + 1 >= limit) return buf.length - start >= UWS_MAX_HEAD_BYTES ? node('head over the uWS limit') : INCOMPLETE;
    if (buf[i] !== CR || buf[i + 1] !== LF) return node('header value');
    const valueEnd = i;
    i += 2;
    if (++headers > UWS_MAX_HEADERS) return node('header count');
    const first = buf[nameStart]! | 0x20;
    if (first === 104 && nameIs(buf, nameStart, nameEnd, 'host')) hosts++;
    else if (first === 99 && nameIs(buf, nameStart, nameEnd, 'content-length')) {
      if (bodyLength !== -1) return node('repeated Content-Length');
      bodyLength = decimal(buf, valueStart, valueEnd);
      if (bodyLength < 0) return node('Content-Length');
    } else if (first === 116 && nameIs(buf, nameStart, nameEnd, 'transfer-encoding')) return node('Transfer-Encoding');
    else if (first === 101 && nameIs(buf, nameStart, nameEnd, 'expect')) return node('Expect');
    // A WebSocket handshake goes to node:http (`ws`): the connection is then node's own
    // socket, where through the front every stream message would be relayed once more,
    // over a unix socket whose small buffer turns bursts into backpressure (the stream
    // conflates deltas under backpressure, which the stream's tests tell apart).
    else if (first === 117 && nameIs(buf, nameStart, nameEnd, 'upgrade')) return node('Upgrade');
  }
  // RFC 9112 3.2: exactly one Host in an HTTP/1.1 request (node:http answers 400 otherwise).
  if (hosts !== 1) return node('Host');
  if (bodyLength > 0 && !method.body) return node('body on a bodiless method');
  return { kind: 'uws', headEnd: i, bodyLength: bodyLength === -1 ? 0 : bodyLength, head: method.head, upgrade };
}

/** The value's decimal number, surrounding blanks allowed; -1 when it is not one (or too long to be exact). */
function decimal(buf: Buffer, start: number, end: number): number {
  while (start < end && (buf[start] === SP || buf[start] === 9)) start++;
  while (end > start && (buf[end - 1] === SP || buf[end - 1] === 9)) end--;
  if (start === end || end - start > 15) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c < 48 || c > 57) return -1;
    n = n * 10 + (c - 48);
  }
  return n;
}
