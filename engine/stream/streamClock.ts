// Clock tokens ("clk") of the stream: where a client's copy of its subscription stands.
// A token names the board sequence it brings the client to, the board time of that
// sequence (the delta query that resumes from it starts at that time: every row changed
// after the sequence was updated at or after it) and the board it came from (its
// epoch), and carries a MAC, so a token from another board, or one this service never
// issued, is told apart from a valid one and answered with a fresh image, never a gap.
//
//   <epoch>.<seq base36>.<board time base36>.<mac: 12 hex>
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface ClockPoint {
  seq: number;
  /** Board time (epoch ms) when seq was the board's sequence. */
  time: number;
}

export class ClockTokens {
  private lastSeq = -1;
  private lastToken = '';

  /**
   * epoch: names the board's history (the same across restarts of a board restored
   * from its data directory, different for a board generated afresh); secret keys the MAC.
   */
  constructor(
    readonly epoch: string,
    private readonly secret: string,
  ) {
    if (!/^[a-z0-9]+$/.test(epoch)) throw new Error(`a stream epoch is lower-case letters and digits, got ${epoch}`);
  }

  /** The token of a point (the last one is memoized: every message of a batch shares it). */
  issue(point: ClockPoint): string {
    if (point.seq === this.lastSeq) return this.lastToken;
    const body = `${this.epoch}.${point.seq.toString(36)}.${point.time.toString(36)}`;
    this.lastSeq = point.seq;
    this.lastToken = `${body}.${this.mac(body)}`;
    return this.lastToken;
  }

  /** The point a token names, or null when this board did not issue it. */
  read(token: string): ClockPoint | null {
    if (typeof token !== 'string' || token.length > 100) return null;
    const parts = token.split('.');
    if (parts.length !== 4 || parts[0] !== this.epoch) return null;
    const body = `${parts[0]}.${parts[1]}.${parts[2]}`;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(parts[3]!);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const seq = parseInt(parts[1]!, 36);
    const time = parseInt(parts[2]!, 36);
    if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(time)) return null;
    return { seq, time };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('hex').slice(0, 12);
  }
}
