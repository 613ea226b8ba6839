// Content negotiation (decisions A5): Accept: application/msgpack selects MessagePack,
// Accept-Encoding: gzip selects gzip for bodies over 1 KiB. Tokens with q=0 are refusals.

export const GZIP_MIN_BYTES = 1024;

/**
 * gzip level for cached variants. Measured on a 47 KB page of odds rows: level 1
 * 80 us, level 3 56 us, level 6 177 us, level 9 427 us, with level 6 only ~10%
 * smaller than 3; on 470 KB: 333 / 361 / 1146 / 4308 us. A variant is rebuilt each
 * time its body changes, so the cheap level wins.
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
