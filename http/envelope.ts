// The response envelope (the OpenAPI Envelope schema) written around rows the engine has
// already rendered: the row bytes are copied once into the body and never parsed
// or re-serialized. Small results (catalogs, single lookups) go through JSON.stringify.

import { isoMillis } from '../engine/timeFormat.ts';

export interface EnvelopeMeta {
  count: number;
  /** Epoch ms; written as ISO-8601 UTC with milliseconds. */
  updated: number;
  nextCursor?: string | null;
  note?: string | null;
  warnings?: readonly string[];
}

const HEAD = Buffer.from('{"success":true,"data":[');

/** rows: JSON objects joined by ',' without brackets (possibly empty). */
export function envelopeFromRows(rows: Buffer, meta: EnvelopeMeta): Buffer {
  const tail = Buffer.from(tailText(meta));
  const body = Buffer.allocUnsafe(HEAD.length + rows.length + tail.length);
  HEAD.copy(body, 0);
  rows.copy(body, HEAD.length);
  tail.copy(body, HEAD.length + rows.length);
  return body;
}

/** For results of a few rows: data is serialized with JSON.stringify. */
export function envelopeFromData(data: readonly unknown[], meta: Omit<EnvelopeMeta, 'count'> & { count?: number }): Buffer {
  const rows = JSON.stringify(data);
  const full: EnvelopeMeta = { ...meta, count: meta.count ?? data.length };
  return Buffer.from(`{"success":true,"data":${rows}${tailText(full).slice(1)}`);
}

/** `],"nextCursor":...,"meta":{...}}` */
function tailText(meta: EnvelopeMeta): string {
  let text = `],"nextCursor":${meta.nextCursor == null ? 'null' : JSON.stringify(meta.nextCursor)},"meta":{"count":${meta.count | 0},"updated":"${isoMillis(meta.updated)}"`;
  if (meta.note != null) text += `,"note":${JSON.stringify(meta.note)}`;
  if (meta.warnings !== undefined && meta.warnings.length > 0) text += `,"warnings":${JSON.stringify(meta.warnings)}`;
  return `${text}}}`;
}
