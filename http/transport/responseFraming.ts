// Finds where one uWebSockets.js response ends in the bytes it writes (front.ts), so
// the front hands uWS one request at a time: uWS itself breaks on a request pipelined
// behind a response still being written (20.30 cuts the first body after one turn's
// budget and never answers the second; 20.57 closes the connection). Only the framing
// uWS produces is read: a status line and headers, then a Content-Length body, a
// chunked body (an open-ended stream such as Server-Sent Events), none (HEAD, 204,
// 304), or a 101 after which the connection is a tunnel.

const LF = 10;

export type FrameResult =
  /** The response goes on past this chunk. */
  | 'more'
  /** The response ended within this chunk; `end` says where. */
  | 'done'
  /** A 101: everything from here on is the upgraded protocol's. */
  | 'tunnel';

type State = 'head' | 'length' | 'chunkSize' | 'chunkData' | 'chunkDataEnd' | 'trailer' | 'untilClose';

export class ResponseFramer {
  private state: State = 'head';
  private headRequest = false;
  /** Head bytes of a head split over chunks. */
  private carry: Buffer | null = null;
  /** Body (or chunk) bytes still to come. */
  private left = 0;
  /** Hex digits of a chunk-size line split over chunks. */
  private sizeLine = '';
  /** Where the response ended in the last chunk fed ('done' only). */
  end = 0;

  /** Starts framing the response to the next request. */
  begin(headRequest: boolean): void {
    this.state = 'head';
    this.headRequest = headRequest;
    this.carry = null;
    this.left = 0;
    this.sizeLine = '';
  }

  /** The body in progress ends where the connection does (no length, not chunked). */
  endsAtClose(): boolean {
    return this.state === 'untilClose';
  }

  feed(chunk: Buffer): FrameResult {
    let i = 0;
    while (i < chunk.length) {
      switch (this.state) {
        case 'head': {
          const found = this.findHeadEnd(chunk, i);
          if (found === -1) return 'more';
          const head = this.carry === null ? chunk.subarray(i, found) : Buffer.concat([this.carry, chunk.subarray(0, found)]);
          this.carry = null;
          i = found;
          const status = (head[9]! - 48) * 100 + (head[10]! - 48) * 10 + (head[11]! - 48);
          if (status === 101) return 'tunnel';
          if (status >= 100 && status < 200) continue; // an interim answer; the final one follows
          if (this.headRequest || status === 204 || status === 304) return this.done(i);
          const framing = bodyFraming(head);
          if (framing === 'chunked') this.state = 'chunkSize';
          else if (framing === 'close') this.state = 'untilClose';
          else if (framing === 0) return this.done(i);
          else {
            this.state = 'length';
            this.left = framing;
          }
          break;
        }
        case 'length':
        case 'chunkData': {
          const take = Math.min(this.left, chunk.length - i);
          this.left -= take;
          i += take;
          if (this.left > 0) return 'more';
          if (this.state === 'length') return this.done(i);
          this.state = 'chunkDataEnd';
          this.left = 2;
          break;
        }
        case 'chunkDataEnd': {
          const take = Math.min(this.left, chunk.length - i);
          this.left -= take;
          i += take;
          if (this.left === 0) this.state = 'chunkSize';
          break;
        }
        case 'chunkSize': {
          const lineEnd = chunk.indexOf(LF, i);
          if (lineEnd === -1) {
            this.sizeLine += chunk.toString('latin1', i);
            return 'more';
          }
          const line = this.sizeLine + chunk.toString('latin1', i, lineEnd);
          this.sizeLine = '';
          i = lineEnd + 1;
          const size = Number.parseInt(line, 16);
          if (size > 0) {
            this.state = 'chunkData';
            this.left = size;
          } else this.state = 'trailer';
          break;
        }
        case 'trailer': {
          // Trailer lines until an empty one; uWS writes none, so this is the final CRLF.
          const lineEnd = chunk.indexOf(LF, i);
          if (lineEnd === -1) {
            this.sizeLine += chunk.toString('latin1', i);
            return 'more';
          }
          const empty = this.sizeLine.length + (lineEnd - i) <= 1;
          this.sizeLine = '';
          i = lineEnd + 1;
          if (empty) return this.done(i);
          break;
        }
        case 'untilClose':
          return 'more';
      }
    }
    return 'more';
  }

  private done(at: number): FrameResult {
    this.end = at;
    this.state = 'head';
    return 'done';
  }

  /** Offset just past CRLF CRLF, counting bytes carried from earlier chunks; -1 (and the bytes carried) when not there yet. */
  private findHeadEnd(chunk: Buffer, from: number): number {
    if (this.carry !== null) {
      // Rare (uWS writes a head in one piece): look across the seam.
      const joined = Buffer.concat([this.carry, chunk]);
      const at = joined.indexOf('\r\n\r\n', 0, 'latin1');
      if (at === -1) {
        this.carry = joined;
        return -1;
      }
      return at + 4 - this.carry.length;
    }
    const at = chunk.indexOf('\r\n\r\n', from, 'latin1');
    if (at === -1) {
      this.carry = Buffer.from(chunk.subarray(from));
      return -1;
    }
    return at + 4;
  }
}

/** From a response head: its Content-Length, 'chunked', or 'close' (delimited by the end of the connection). */
function bodyFraming(head: Buffer): number | 'chunked' | 'close' {
  const text = head.toString('latin1');
  let at = text.indexOf('\r\n');
  while (at !== -1 && at + 2 < text.length) {
    const next = text.indexOf('\r\n', at + 2);
    const line = text.slice(at + 2, next === -1 ? text.length : next);
    const colon = line.indexOf(':');
    if (colon > 0) {
      const name = line.slice(0, colon).toLowerCase();
      if (name === 'content-length') return Number.parseInt(line.slice(colon + 1).trim(), 10);
      if (name === 'transfer-encoding' && line.slice(colon + 1).toLowerCase().includes('chunked')) return 'chunked';
    }
    at = next;
  }
  return 'close';
}
