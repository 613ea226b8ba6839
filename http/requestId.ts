// X-Request-Id for every response: the client's own when it sends a usable one (so a
// caller can follow one request through its logs and ours), else one made from a
// per-process prefix and a counter. No randomness per request: the prefix (process
// id and start time) keeps ids of different processes apart, and the counter keeps
// ids of one process apart.

/** Longest client id echoed; a longer one is replaced, as is one with characters outside visible ASCII. */
const MAX_CLIENT_ID = 128;

export class RequestIds {
  private readonly prefix: string;
  private count = 0;

  constructor(prefix = `${process.pid.toString(36)}${Date.now().toString(36)}-`) {
    this.prefix = prefix;
  }

  /** clientId: the request's X-Request-Id header ('' when absent). */
  next(clientId: string): string {
    if (clientId.length !== 0 && usable(clientId)) return clientId;
    return this.prefix + (++this.count).toString(36);
  }
}

/** Visible ASCII only: the id is written back into a header and into JSON log lines. */
function usable(id: string): boolean {
  if (id.length > MAX_CLIENT_ID) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}
