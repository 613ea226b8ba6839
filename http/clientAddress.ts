// Whose request is this: the client's address behind trusted reverse proxies.
//
// The per-address limits (the push stream's anonymous connections, STREAM_MAX_ANONYMOUS_CONNECTIONS)
// count clients by address. Behind nginx every connection comes from nginx's address, so without
// this every anonymous client would share one allowance. TRUSTED_PROXIES names the proxies whose
// X-Forwarded-For is believed; nothing else is (a client can send any X-Forwarded-For it likes).
//
// The walk is the one nginx's realip module does with `real_ip_recursive on`: start at the TCP
// peer; while the address in hand is a trusted proxy, step to the next X-Forwarded-For entry from
// the right (the one that proxy appended). The first untrusted address is the client. Entries a
// trusted proxy appended that are not addresses (`unknown`, garbage) stop the walk at that proxy:
// the request is counted as the proxy's, never as a name the client chose.
import net from 'node:net';
import { canonicalAddress } from './transport/peerAddress.ts';

/** Most X-Forwarded-For entries looked at (a chain of proxies is a few long; the header is client-writable). */
const MAX_HOPS = 16;

export class ClientAddresses {
  private readonly trusted: net.BlockList;

  /** `entries`: addresses and CIDR blocks (`10.0.0.0/8`, `::1`, `fd00::/8`), already checked by parseTrustedProxies. */
  constructor(private readonly entries: readonly string[]) {
    this.trusted = new net.BlockList();
    for (const entry of entries) {
      const { address, prefix, family } = parseEntry(entry)!;
      if (prefix === null) this.trusted.addAddress(address, family);
      else this.trusted.addSubnet(address, prefix, family);
    }
  }

  /** True when no proxy is trusted: the TCP peer is the client and X-Forwarded-For need not be read. */
  get none(): boolean {
    return this.entries.length === 0;
  }

  /**
   * The client's address (canonical text, peerAddress.ts) given the TCP peer's (canonical) and
   * the request's X-Forwarded-For header ('' when absent). '' stays '' (the peer is unknown).
   */
  resolve(peer: string, forwardedFor: string): string {
    if (peer === '' || this.entries.length === 0 || !this.isTrusted(peer)) return peer;
    let client = peer;
    let end = forwardedFor.length;
    for (let hop = 0; hop < MAX_HOPS && end > 0; hop++) {
      const comma = forwardedFor.lastIndexOf(',', end - 1);
      const entry = canonicalAddress(stripPort(forwardedFor.slice(comma + 1, end).trim()));
      if (entry === '') return client;
      client = entry;
      if (!this.isTrusted(client)) return client;
      end = comma === -1 ? 0 : comma;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    return this.trusted.check(address, net.isIPv4(address) ? 'ipv4' : 'ipv6');
  }
}

/** `[::1]:443` and `203.0.113.7:51234` as some proxies write them; a bare IPv6 address keeps its colons. */
function stripPort(text: string): string {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    return close === -1 ? text : text.slice(1, close);
  }
  const colon = text.indexOf(':');
  if (colon !== -1 && colon === text.lastIndexOf(':') && net.isIPv4(text.slice(0, colon))) return text.slice(0, colon);
  return text;
}

function parseEntry(entry: string): { address: string; prefix: number | null; family: 'ipv4' | 'ipv6' } | null {
  const slash = entry.indexOf('/');
  const address = canonicalAddress(slash === -1 ? entry : entry.slice(0, slash));
  if (address === '') return null;
  const family = net.isIPv4(address) ? 'ipv4' : 'ipv6';
  if (slash === -1) return { address, prefix: null, family };
  const text = entry.slice(slash + 1);
  const prefix = Number(text);
  if (!/^\d{1,3}$/.test(text) || prefix > (family === 'ipv4' ? 32 : 128)) return null;
  return { address, prefix, family };
}

/** TRUSTED_PROXIES' text: comma-separated addresses and CIDR blocks ('' for none); null when an entry is neither. */
export function parseTrustedProxies(text: string): string[] | null {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  return entries.every((entry) => parseEntry(entry) !== null) ? entries : null;
}
