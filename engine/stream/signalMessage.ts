// One signal-stream message (engine/stream/signalTopics.ts) in each wire format, each
// serialised once however many subscribers take it: JSON at once (the SSE stream and
// most WebSocket clients read it), MessagePack the first time a subscriber asks for it.
// A transport adds its own framing around these bytes (the SSE event lines, the
// WebSocket stream's op and subscription id: withHead below) without serialising the
// body again.
import { Packr } from 'msgpackr';
import type { WireFormat } from './streamMessages.ts';

const packr = new Packr({ useRecords: false, variableMapSize: true });

export class SignalMessage {
  /** The body as one JSON object. */
  readonly json: Buffer;
  private packed: Buffer | null = null;

  constructor(private readonly body: Readonly<Record<string, unknown>>) {
    this.json = Buffer.from(JSON.stringify(body));
  }

  /** The body as one MessagePack map, built on first use. */
  get msgpack(): Buffer {
    // msgpackr may hand back a view of a buffer it reuses: keep a copy
    this.packed ??= Buffer.from(packr.pack(this.body));
    return this.packed;
  }

  get(format: WireFormat): Buffer {
    return format === 'json' ? this.json : this.msgpack;
  }
}

/**
 * Fields written in front of a message's own (the WebSocket stream's op and
 * subscription id), encoded once per subscription in each format: `json` is the
 * fields' text without braces, `msgpack` their keys and values, `count` how many.
 */
export interface MessageHead {
  json: Buffer;
  msgpack: Buffer;
  count: number;
}

export function messageHead(fields: Readonly<Record<string, unknown>>): MessageHead {
  const entries = Object.entries(fields);
  const text = JSON.stringify(fields);
  return {
    json: Buffer.from(`${text.slice(1, -1)},`),
    msgpack: Buffer.concat(entries.flatMap(([key, value]) => [Buffer.from(packr.pack(key)), Buffer.from(packr.pack(value))])),
    count: entries.length,
  };
}

const OPEN_BRACE = Buffer.from('{');

/** The message with `head`'s fields first: one copy of the shared bytes, no serialisation. */
export function withHead(message: SignalMessage, head: MessageHead, format: WireFormat): Buffer {
  if (format === 'json') {
    const body = message.json; // '{' + the body's fields + '}'
    return Buffer.concat([OPEN_BRACE, head.json, body.subarray(1)]);
  }
  const body = message.msgpack;
  let count: number;
  let entries: Buffer;
  const first = body[0]!;
  if ((first & 0xf0) === 0x80) {
    count = first & 0x0f;
    entries = body.subarray(1);
  } else if (first === 0xde) {
    count = body.readUInt16BE(1);
    entries = body.subarray(3);
  } else if (first === 0xdf) {
    count = body.readUInt32BE(1);
    entries = body.subarray(5);
  } else {
    throw new Error('a signal message is a MessagePack map');
  }
  return Buffer.concat([mapHeader(count + head.count), head.msgpack, entries]);
}

function mapHeader(size: number): Buffer {
  if (size < 16) return Buffer.from([0x80 | size]);
  if (size < 0x10000) return Buffer.from([0xde, size >> 8, size & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = 0xdf;
  out.writeUInt32BE(size, 1);
  return out;
}
