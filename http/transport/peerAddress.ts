// The client's address as one text whatever the transport, and how the uWS front tells
// uWS the address of the client it relays. Per-address limits (the push stream's
// anonymous connections) count a client the same whether its request reached uWS or
// node:http, so both must spell an address the same way: node:http reports
// '::ffff:203.0.113.7' for an IPv4 client of a dual-stack socket and uWS reports IPv6
// uncompressed ('0000:0000:...:0001'); both become '203.0.113.7' and '::1' here.
//
// Behind the front (front.ts) uWS reads requests from a private unix socket, where the
// peer is the front itself. The front therefore opens each upstream connection with a
// PROXY protocol version 2 header (haproxy.org/download/2.9/doc/proxy-protocol.txt)
// naming the client's TCP addresses, which uWS parses before the first request
// (getProxiedRemoteAddressAsText). The header comes from the front's own socket, never
// from anything the client sent, and only the front writes to that socket.
import net from 'node:net';

/** The PROXY v2 signature: 12 bytes no HTTP request starts with. */
const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** Version 2, command PROXY. */
const PROXY_COMMAND = 0x21;
/** Version 2, command LOCAL: no addresses (the client's socket no longer knows them). */
const LOCAL_COMMAND = 0x20;
const TCP4 = 0x11;
const TCP6 = 0x21;

/**
 * An address as the per-address limits key it: IPv4 dotted (also for an IPv4-mapped
 * IPv6 address), IPv6 compressed lower case without a zone; '' for nothing or what is
 * not an address.
 */
export function canonicalAddress(text: string | undefined | null): string {
  if (text === undefined || text === null || text === '') return '';
  const zone = text.indexOf('%');
  const bare = zone === -1 ? text : text.slice(0, zone);
  const kind = net.isIP(bare);
  if (kind === 4) return bare;
  if (kind !== 6) return '';
  const bytes = ipv6Bytes(bare);
  if (bytes === null) return '';
  if (isV4Mapped(bytes)) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  return compressV6(bytes);
}

/** The 16 bytes of an IPv6 address (net.isIP already said it is one), or null. */
function ipv6Bytes(text: string): Uint8Array | null {
  let head = text;
  let tail4: number[] = [];
  // An embedded IPv4 tail ('::ffff:1.2.3.4') stands for the last two groups.
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) !== -1) {
    tail4 = text.slice(lastColon + 1).split('.').map(Number);
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const left = halves[0] === '' ? [] : halves[0]!.split(':');
  const right = halves.length === 2 ? (halves[1] === '' ? [] : halves[1]!.split(':')) : [];
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const groups = [...left, ...new Array<string>(fill).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const value = Number.parseInt(groups[i]!, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  }
  if (tail4.length === 4) bytes.set(tail4, 12);
  return bytes;
}

function isV4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as '::'. */
function compressV6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) => groups.slice(from, to).map((g) => g.toString(16)).join(':');
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/** The 4 or 16 bytes of a canonical address; null when it is neither. */
function addressBytes(canonical: string): Uint8Array | null {
  const kind = net.isIP(canonical);
  if (kind === 4) return Uint8Array.from(canonical.split('.').map(Number));
  if (kind === 6) return ipv6Bytes(canonical);
  return null;
}

/** Enough of a socket to name both its ends. */
export interface SocketEnds {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
  localAddress?: string | undefined;
  localPort?: number | undefined;
}

/**
 * The PROXY v2 header naming a client connection's source (the client) and destination
 * (our listening address). Both ends in one family: an IPv4 client of an IPv6 listener
 * goes as IPv6 with the client's address mapped (uWS reports it mapped, and
 * canonicalAddress unmaps it). LOCAL when the client's address is unknown (its socket
 * already closed): uWS then reports no proxied address.
 */
export function proxyV2Header(socket: SocketEnds): Buffer {
  const source = addressBytes(canonicalAddress(socket.remoteAddress));
  let destination = addressBytes(canonicalAddress(socket.localAddress));
  if (source === null) return Buffer.concat([SIGNATURE, Buffer.from([LOCAL_COMMAND, 0x00, 0x00, 0x00])]);
  let src = source;
  if (destination === null || destination.length !== src.length) {
    // Mixed families: both as IPv6, IPv4 mapped.
    src = src.length === 4 ? mapV4(src) : src;
    destination = destination === null ? new Uint8Array(16) : destination.length === 4 ? mapV4(destination) : destination;
  }
  const family = src.length === 4 ? TCP4 : TCP6;
  const length = src.length * 2 + 4;
  const header = Buffer.alloc(SIGNATURE.length + 4 + length);
  SIGNATURE.copy(header, 0);
  let at = SIGNATURE.length;
  header[at++] = PROXY_COMMAND;
  header[at++] = family;
  header.writeUInt16BE(length, at);
  at += 2;
  header.set(src, at);
  at += src.length;
  header.set(destination, at);
  at += destination.length;
  header.writeUInt16BE((socket.remotePort ?? 0) & 0xffff, at);
  header.writeUInt16BE((socket.localPort ?? 0) & 0xffff, at + 2);
  return header;
}

function mapV4(v4: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  bytes.set(v4, 12);
  return bytes;
}
