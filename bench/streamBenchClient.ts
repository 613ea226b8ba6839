// The push stream bench's client side: many WebSocket connections in one process, kept
// as lean as a client can be so that what the bench measures is the server and the
// network, not a client library. Each connection is a raw TCP socket speaking just
// enough of RFC 6455 (the upgrade, masked text frames out, unmasked frames in): a frame
// is not decoded, only its first bytes are read for the op and the clk, and the time a
// frame arrived is taken once per socket read (the read that completes it). Every
// socket reads into one shared buffer (net's onread), so reading allocates nothing and
// the client's garbage collector stays out of the measured times.
//
// Receive times are process.hrtime (CLOCK_MONOTONIC on Linux: one clock for every
// process of the machine), so they compare with the server's apply times directly.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** Milliseconds on the machine-wide monotonic clock (comparable across processes). */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** How many payload bytes of a frame are kept to read its op and clk (they lead every message). */
const HEAD_BYTES = 160;

/** The one buffer every socket of the process reads into (each read is handled before the next). */
const READ_BUFFER = Buffer.alloc(256 * 1024);

export interface FrameSeen {
  /** The first headLength bytes of the payload, in a buffer reused for the next frame (read it in the callback). */
  head: Buffer;
  headLength: number;
  length: number;
  /** When the read that completed the frame returned (monotonicMs). */
  at: number;
}

const CLK_FIELD = Buffer.from('"clk":"');
const QUOTE = 0x22;

/** Whether the frame's payload starts with `prefix` (no allocation). */
export function frameStartsWith(frame: FrameSeen, prefix: Buffer): boolean {
  return frame.headLength >= prefix.length && frame.head.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

/** The frame's clk field (the one string a frame costs the client), or null. */
export function frameClk(frame: FrameSeen): string | null {
  const start = frame.head.indexOf(CLK_FIELD);
  if (start < 0 || start >= frame.headLength) return null;
  const from = start + CLK_FIELD.length;
  const end = frame.head.indexOf(QUOTE, from);
  if (end < 0 || end > frame.headLength) return null;
  return frame.head.toString('latin1', from, end);
}

/** One connection: open() resolves after the 101; every complete server frame goes to onFrame. */
export class BenchSocket {
  private readonly socket: Socket;
  private handshake: Buffer | null = Buffer.alloc(0);
  /** The frame being read: its header bytes so far, payload bytes left, kept head. */
  private header = Buffer.alloc(14);
  private headerHave = 0;
  private remaining = -1;
  private length = 0;
  private head = Buffer.alloc(HEAD_BYTES);
  private headHave = 0;
  private readonly seen: FrameSeen = { head: this.head, headLength: 0, length: 0, at: 0 };

  private constructor(
    socket: Socket,
    private readonly onFrame: (frame: FrameSeen) => void,
  ) {
    this.socket = socket;
  }

  static open(port: number, path: string, onFrame: (frame: FrameSeen) => void): Promise<BenchSocket> {
    return new Promise((resolve, reject) => {
      let client: BenchSocket | null = null;
      const onread = (nread: number, buffer: Uint8Array): boolean => {
        const at = monotonicMs();
        const chunk = buffer as Buffer;
        if (client === null) return true;
        if (client.handshake === null) {
          client.read(chunk, nread, at);
          return true;
        }
        const seen = Buffer.concat([client.handshake, chunk.subarray(0, nread)]);
        const end = seen.indexOf('\r\n\r\n');
        if (end < 0) {
          client.handshake = seen;
          return true;
        }
        const status = seen.subarray(0, seen.indexOf('\r\n')).toString('latin1');
        if (!status.includes(' 101 ')) {
          reject(new Error(`stream upgrade refused: ${status}`));
          client.socket.destroy();
          return false;
        }
        client.handshake = null;
        resolve(client);
        if (seen.length > end + 4) {
          const rest = seen.subarray(end + 4);
          client.read(rest, rest.length, at);
        }
        return true;
      };
      const socket = connect({ port, host: '127.0.0.1', noDelay: true, onread: { buffer: READ_BUFFER, callback: onread } });
      client = new BenchSocket(socket, onFrame);
      socket.once('error', reject);
      socket.on('connect', () => {
        const key = randomBytes(16).toString('base64');
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      });
    });
  }

  /** A text frame, masked as a client must (with a zero mask: the payload goes as it is). */
  sendText(text: string): void {
    const payload = Buffer.from(text);
    const length = payload.length;
    const header = length < 126 ? Buffer.from([0x81, 0x80 | length, 0, 0, 0, 0]) : Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff, 0, 0, 0, 0]);
    this.socket.write(Buffer.concat([header, payload]));
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer, size: number, at: number): void {
    let i = 0;
    while (i < size) {
      if (this.remaining < 0) {
        // the frame header: 2 bytes, then 2 or 8 bytes of length (servers do not mask)
        this.header[this.headerHave++] = chunk[i++]!;
        if (this.headerHave < 2) continue;
        const short = this.header[1]! & 0x7f;
        const needed = short === 126 ? 4 : short === 127 ? 10 : 2;
        if (this.headerHave < needed) continue;
        this.length = short === 126 ? this.header.readUInt16BE(2) : short === 127 ? Number(this.header.readBigUInt64BE(2)) : short;
        this.remaining = this.length;
        this.headerHave = 0;
        this.headHave = 0;
      }
      const take = Math.min(this.remaining, size - i);
      if (this.headHave < HEAD_BYTES) {
        const keep = Math.min(take, HEAD_BYTES - this.headHave);
        chunk.copy(this.head, this.headHave, i, i + keep);
        this.headHave += keep;
      }
      i += take;
      this.remaining -= take;
      if (this.remaining === 0) {
        this.remaining = -1;
        const seen = this.seen;
        seen.headLength = this.headHave;
        seen.length = this.length;
        seen.at = at;
        this.onFrame(seen);
      }
    }
  }
}
