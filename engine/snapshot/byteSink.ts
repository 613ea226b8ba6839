// A reusable, growable byte buffer that snapshot pieces are rendered into before they
// are compressed. One per snapshot variant: reset() between pieces, never freed, so
// rendering a piece allocates nothing once the buffer has reached its working size.

export class ByteSink {
  buffer: Buffer;
  length = 0;

  constructor(initialBytes = 256 * 1024) {
    this.buffer = Buffer.allocUnsafeSlow(initialBytes);
  }

  reset(): void {
    this.length = 0;
  }

  /** Makes room for `bytes` more bytes (doubling). */
  reserve(bytes: number): void {
    const needed = this.length + bytes;
    if (needed <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < needed) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }

  /** Appends ASCII-only text (numbers, keys, fixed literals). */
  ascii(text: string): void {
    this.reserve(text.length);
    this.length += this.buffer.write(text, this.length, 'latin1');
  }

  /** Appends any text as UTF-8. */
  utf8(text: string): void {
    this.reserve(text.length * 3);
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  /** Appends bytes; short runs are copied in JS (cheaper than a native copy call). */
  bytes(source: Uint8Array): void {
    const n = source.length;
    this.reserve(n);
    const buffer = this.buffer;
    let at = this.length;
    if (n > 64) buffer.set(source, at);
    else for (let i = 0; i < n; i++) buffer[at + i] = source[i];
    this.length = at + n;
  }

  /** Appends a non-negative integer below 2^53 in decimal, without making a string. */
  uint(value: number): void {
    this.reserve(16);
    const buffer = this.buffer;
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    let at = this.length + digits;
    this.length = at;
    let rest = value;
    do {
      const next = Math.floor(rest / 10);
      buffer[--at] = 48 + rest - next * 10;
      rest = next;
    } while (rest > 0);
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  /** The bytes written so far (a view: valid until the next write or reset). */
  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
