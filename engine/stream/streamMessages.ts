// The stream's server messages as bytes: one JSON object per text frame, or the same
// object as one MessagePack map per binary frame. A message that carries rows gets them
// as bytes rendered once per change and format (rowsJson / rowsMsgpack) and shared by
// every subscription that receives them; only the few envelope fields (id, clk, prev)
// are written per subscription, in front of the rows.
import { Packr } from 'msgpackr';

export type WireFormat = 'json' | 'msgpack';
export const WIRE_FORMATS: readonly WireFormat[] = ['json', 'msgpack'];

export type ServerOp = 'image' | 'delta' | 'heartbeat' | 'status';

/** One message on its way to a client: the bytes, plus what an SSE writer needs (event name, id). */
export interface OutgoingMessage {
  op: ServerOp;
  /** The clk a client resumes from after applying this message; null when it is not a resume point. */
  resumeClk: string | null;
  bytes: Buffer;
  binary: boolean;
  /** The same message framed as a Server-Sent Event, built by the first SSE client that sends it (a delta is shared by every subscription it is for). */
  sse?: Buffer;
}

const packr = new Packr({ useRecords: false, variableMapSize: true });
const JSON_TAIL = Buffer.from(']}');

/** Rows rendered as JSON objects joined by ',' (engine fragments) -> the msgpack array of the same rows. */
export function rowsMsgpack(rowsJson: Buffer): Buffer {
  return pack(JSON.parse(`[${rowsJson.toString('utf8')}]`));
}

/**
 * A message whose last field is `rows`: head holds the other fields in order (values
 * JSON-serializable, undefined ones left out).
 */
export function rowsMessage(format: WireFormat, head: Record<string, unknown>, rows: Buffer): Buffer {
  if (format === 'json') {
    const text = jsonRowsHead(head);
    const out = jsonRowsBuffer(text, rows.length);
    rows.copy(out, out.length - rows.length - JSON_TAIL.length);
    return out;
  }
  const entries = Object.entries(head).filter(([, value]) => value !== undefined);
  const parts: Buffer[] = [mapHeader(entries.length + 1)];
  for (const [key, value] of entries) parts.push(pack(key), pack(value));
  parts.push(pack('rows'), rows);
  return Buffer.concat(parts);
}

/** A JSON rows message's text up to its rows: the head's fields, then `"rows":[`. */
export function jsonRowsHead(head: Record<string, unknown>): string {
  const text = JSON.stringify(head);
  return `${text.slice(0, -1)},"rows":[`;
}

/**
 * One buffer for a whole JSON rows message, with the head written and the tail `]}` in
 * place: the caller writes the rows' `rowsLength` bytes between them (one allocation
 * and no copy of the rows beyond writing them there).
 */
export function jsonRowsBuffer(headText: string, rowsLength: number): Buffer {
  const headLength = Buffer.byteLength(headText);
  const out = Buffer.allocUnsafe(headLength + rowsLength + JSON_TAIL.length);
  out.write(headText, 0, headLength, 'utf8');
  JSON_TAIL.copy(out, headLength + rowsLength);
  return out;
}

/** A message without rows (heartbeat, status). */
export function plainMessage(format: WireFormat, message: Record<string, unknown>): Buffer {
  return format === 'json' ? Buffer.from(JSON.stringify(message)) : pack(message);
}

function mapHeader(size: number): Buffer {
  if (size < 16) return Buffer.from([0x80 | size]);
  return Buffer.from([0xde, size >> 8, size & 0xff]);
}

/** msgpackr may hand back a view of a buffer it reuses: keep a copy. */
function pack(value: unknown): Buffer {
  return Buffer.from(packr.pack(value));
}
