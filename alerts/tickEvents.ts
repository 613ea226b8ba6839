// A producer tick's events as the delivery thread receives them (threadProtocol.ts):
// the bodies as UTF-8 lines in one buffer. Each event gets its text (for the outbox and
// the matching) and its bytes, a view of the tick's buffer in which the newlines are
// made commas (JSON text holds no raw newline, and no byte of a multi-byte UTF-8
// character is 0x0a): events that follow one another are then one slice of that
// buffer, which a delivery's body sends as one piece (deliveryWorker.ts deliveryBody).
import type { AlertEvent } from './alertEvent.ts';

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const NEWLINE = 0x0a;
const COMMA = 0x2c;

export interface TickEvent {
  event: AlertEvent;
  body: string;
  bytes: Buffer;
}

/** Reads (and rewrites in place: newlines to commas) a tick's buffer; createdAt[i] is event i's engine time. */
export function readTick(bodies: Uint8Array, createdAt: Float64Array): TickEvent[] {
  const events: TickEvent[] = [];
  for (let start = 0, i = 0; start < bodies.length; i++) {
    let end = bodies.indexOf(NEWLINE, start);
    if (end < 0) end = bodies.length;
    else bodies[end] = COMMA;
    const bytes = Buffer.from(bodies.buffer, bodies.byteOffset + start, end - start);
    const body = decoder.decode(bytes);
    const parsed = JSON.parse(body) as Omit<AlertEvent, 'createdAt'>;
    events.push({ event: { id: parsed.id, type: parsed.type, createdAt: createdAt[i]!, data: parsed.data }, body, bytes });
    start = end + 1;
  }
  return events;
}

/** The main thread's side: a tick's bodies as one buffer with its own ArrayBuffer (so it can be transferred). */
export function tickBuffer(bodies: readonly string[]): Uint8Array<ArrayBuffer> {
  return encoder.encode(bodies.join('\n')) as Uint8Array<ArrayBuffer>;
}
