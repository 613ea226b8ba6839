// Content negotiation: Accept: application/msgpack selects MessagePack,
// Accept-Encoding: gzip selects gzip for bodies over 1 KiB. Tokens with q=0 are refusals.

export const GZIP_MIN_BYTES = 1024;

/**
 * gzip level for cached variants, measured (node:zlib gzipSync, varied odds rows):
 *   100-row page, 49 KB:  level 1 138 us 7.5x | level 3 155 us 8.2x | level 6 237 us 9.5x
 *   1000-row page, 492 KB: level 1 1.36 ms 8.1x | level 3 1.67 ms 9.0x | level 6 3.82 ms 10.9x
 * A variant is rebuilt on the event loop each time its body changes, so level 6's
 * extra 15% costs more than it saves; level 3 buys 8-10% over level 1 for ~15% time.
 */
export const GZIP_LEVEL = 3;

export function wantsMsgpack(accept: string): boolean {
  return accept !== '' && accepts(accept, 'application/msgpack', 'application/x-msgpack');
}

export function wantsGzip(acceptEncoding: string): boolean {
  return acceptEncoding !== '' && accepts(acceptEncoding, 'gzip', 'x-gzip');
}

/** True when the comma list names one of the tokens without q=0. */
function accepts(header: string, token: string, alias: string): boolean {
  const lower = header.toLowerCase();
  if (!lower.includes(token) && !lower.includes(alias)) return false;
  for (const member of lower.split(',')) {
    const semi = member.indexOf(';');
    const name = (semi === -1 ? member : member.slice(0, semi)).trim();
    if (name !== token && name !== alias) continue;
    return semi === -1 || !/;\s*q\s*=\s*0(\.0*)?\s*(;|$)/.test(member.slice(semi));
  }
  return false;
}
