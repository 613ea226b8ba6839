// One subscription of a client: where its client stands on the board's clock, whether
// something it follows is waiting to be sent, and the image being sent to it.
import { formatCode } from '../rowJson.ts';
import type { ClockPoint } from './streamClock.ts';
import type { oddsFilterOf } from './streamFilter.ts';
import type { Group } from './group.ts';
import type { SubscribeRequest } from './streamSink.ts';

/** Generic in its client (StreamClient), so this file needs none of the client's. */
export class Subscription<Client> {
  /**
   * Where the client stands: the point (board sequence and time) of the last image or
   * delta it was sent, and its clk. Kept as numbers, not a ClockPoint object: the
   * fan-out moves every subscription in step each batch, and storing a new object into
   * a long-lived one costs the garbage collector's write barrier each time.
   */
  seq = 0;
  time = 0;
  clk = '';
  /** Something it follows changed since its point and was not sent yet. */
  dirty = false;
  lastFlushAt = 0;
  readonly formatCode: number;
  /** conflateMs > 0, read on the fan-out path without touching the request. */
  readonly conflates: boolean;
  /**
   * Subscriptions of a group whose deltas are the same bytes share them: same wire
   * format, odds format, previous clk and id (every subscription that has kept up with
   * its group has the same previous clk). This is the part without the clk.
   */
  readonly sharingPrefix: string;
  /** The image being sent, one segment per turn of the event loop; null once its last segment went out. */
  imaging: ImageInProgress | null = null;
  /** A resume from a clk this board has not reached yet: where it will start, and until when (wall ms) it waits. */
  awaiting: { point: ClockPoint; clk: string; until: number } | null = null;

  constructor(
    readonly id: string,
    readonly client: Client,
    readonly group: Group<Subscription<Client>>,
    readonly request: SubscribeRequest,
  ) {
    this.formatCode = formatCode(request.oddsFormat);
    this.conflates = request.conflateMs > 0;
    this.sharingPrefix = `${request.format}:${this.formatCode}:`;
  }

  /** The client now stands at `point`, whose token is `clk`. */
  moveTo(point: ClockPoint, clk: string): void {
    this.seq = point.seq;
    this.time = point.time;
    this.clk = clk;
  }

  point(): ClockPoint {
    return { seq: this.seq, time: this.time };
  }
}

/**
 * An image sent segment by segment: each segment is read and rendered in its own turn
 * of the event loop (setImmediate between them), so a large image does not hold back
 * every other subscriber's next delta. Every segment carries the clk of the moment the
 * image started; a row in a later segment may already be newer than that (the board
 * moved on between segments), and everything the subscription's rows did after that
 * clk follows the image as deltas (changes noted while it was sent, then one catch-up
 * from the image's clk), so image + deltas is exactly what /odds holds.
 */
export interface ImageInProgress {
  readonly point: ClockPoint;
  readonly clk: string;
  readonly resync: boolean;
  readonly filter: ReturnType<typeof oddsFilterOf>;
  /** The id after which the next segment starts (keyset paging, as /odds pages). */
  afterId: string | null;
  first: boolean;
  next: NodeJS.Immediate | null;
  /** Waiting for the client's socket to drain before the next segment (an image is paced by its reader). */
  paused: boolean;
}
