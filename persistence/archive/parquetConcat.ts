// Parquet files of one schema joined into one file without decoding a row: a split day's
// parts, in key order, become the day's export in about the time it takes to copy their
// bytes (a DuckDB COPY of the same rows decodes and re-encodes them: ~28 s of CPU for a
// full-size day).
//
// Why it is sound: a Parquet file is "PAR1", its column chunks (pages, each with its own
// header; page indexes and bloom filters after them), then the footer (FileMetaData,
// Thrift compact protocol), its length and "PAR1". Nothing in the pages points anywhere
// else in the file; only the footer holds absolute offsets. So the joined file is "PAR1",
// each file's bytes between its magic and its footer one after another, and one footer:
// the first file's (schema, key-value metadata, writer) with the row groups of all of
// them, every absolute offset in them shifted by where that file's bytes now start, the
// row count summed and the row groups renumbered. Files whose schemas differ are refused.
//
// The footer is read and written by a generic Thrift compact-protocol codec, so fields
// this file does not know (statistics, encodings, size statistics...) pass through as
// they were.

import { open } from 'node:fs/promises';

const MAGIC = Buffer.from('PAR1', 'latin1');

// Thrift compact protocol types
const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

interface Field {
  id: number;
  type: number;
  value: Value;
}
type Struct = Field[];
interface List {
  elemType: number;
  items: Value[];
}
interface ThriftMap {
  keyType: number;
  valType: number;
  entries: [Value, Value][];
}
type Value = boolean | number | bigint | Uint8Array | Struct | List | ThriftMap;

class Reader {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.bytes.length) throw new Error('the Parquet footer ends early');
    return this.bytes[this.pos++];
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('a varint in the Parquet footer is too long');
    }
  }

  zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  take(n: number): Uint8Array {
    if (this.pos + n > this.bytes.length) throw new Error('the Parquet footer ends early');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  struct(): Struct {
    const fields: Struct = [];
    let last = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return fields;
      const type = head & 0x0f;
      const delta = head >> 4;
      const id = delta !== 0 ? last + delta : Number(this.zigzag());
      const value = type === T_TRUE || type === T_FALSE ? type === T_TRUE : this.value(type);
      fields.push({ id, type, value });
      last = id;
    }
  }

  value(type: number): Value {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        // inside a list or map: one byte
        return this.byte() === 1;
      case T_BYTE:
        return this.byte();
      case T_I16:
      case T_I32:
        return Number(this.zigzag());
      case T_I64:
        return this.zigzag();
      case T_DOUBLE:
        return this.take(8);
      case T_BINARY:
        return this.take(Number(this.varint()));
      case T_LIST:
      case T_SET: {
        const head = this.byte();
        const size = head >> 4 === 15 ? Number(this.varint()) : head >> 4;
        const elemType = head & 0x0f;
        const items: Value[] = [];
        for (let i = 0; i < size; i++) items.push(this.value(elemType));
        return { elemType, items };
      }
      case T_MAP: {
        const size = Number(this.varint());
        if (size === 0) return { keyType: 0, valType: 0, entries: [] };
        const types = this.byte();
        const map: ThriftMap = { keyType: types >> 4, valType: types & 0x0f, entries: [] };
        for (let i = 0; i < size; i++) map.entries.push([this.value(map.keyType), this.value(map.valType)]);
        return map;
      }
      case T_STRUCT:
        return this.struct();
      default:
        throw new Error(`the Parquet footer holds an unknown Thrift type ${type}`);
    }
  }
}

class Writer {
  private readonly parts: number[] = [];
  private readonly chunks: Uint8Array[] = [];

  private flushBytes(): void {
    if (this.parts.length > 0) {
      this.chunks.push(Uint8Array.from(this.parts));
      this.parts.length = 0;
    }
  }

  byte(b: number): void {
    this.parts.push(b & 0xff);
  }

  varint(n: bigint): void {
    let v = n;
    while (v >= 0x80n) {
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.byte(Number(v));
  }

  zigzag(n: bigint): void {
    this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }

  raw(bytes: Uint8Array): void {
    this.flushBytes();
    this.chunks.push(bytes);
  }

  struct(fields: Struct): void {
    let last = 0;
    for (const field of fields) {
      const type = field.type === T_TRUE || field.type === T_FALSE ? (field.value ? T_TRUE : T_FALSE) : field.type;
      const delta = field.id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(field.id));
      }
      if (type !== T_TRUE && type !== T_FALSE) this.value(type, field.value);
      last = field.id;
    }
    this.byte(0);
  }

  value(type: number, value: Value): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        // (as Thrift writes a bool outside a field: 1 true, 2 false)
        this.byte(value ? 1 : 2);
        return;
      case T_BYTE:
        this.byte(value as number);
        return;
      case T_I16:
      case T_I32:
        this.zigzag(BigInt(value as number));
        return;
      case T_I64:
        this.zigzag(value as bigint);
        return;
      case T_DOUBLE:
        this.raw(value as Uint8Array);
        return;
      case T_BINARY: {
        const bytes = value as Uint8Array;
        this.varint(BigInt(bytes.length));
        this.raw(bytes);
        return;
      }
      case T_LIST:
      case T_SET: {
        const list = value as List;
        if (list.items.length < 15) this.byte((list.items.length << 4) | list.elemType);
        else {
          this.byte(0xf0 | list.elemType);
          this.varint(BigInt(list.items.length));
        }
        for (const item of list.items) this.value(list.elemType, item);
        return;
      }
      case T_MAP: {
        const map = value as ThriftMap;
        this.varint(BigInt(map.entries.length));
        if (map.entries.length === 0) return;
        this.byte((map.keyType << 4) | map.valType);
        for (const [k, v] of map.entries) {
          this.value(map.keyType, k);
          this.value(map.valType, v);
        }
        return;
      }
      case T_STRUCT:
        this.struct(value as Struct);
        return;
      default:
        throw new Error(`cannot write Thrift type ${type}`);
    }
  }

  bytes(): Buffer {
    this.flushBytes();
    return Buffer.concat(this.chunks);
  }
}

function field(struct: Struct, id: number): Field | undefined {
  return struct.find((f) => f.id === id);
}

/** Adds `shift` to an i64 offset field when it is there and points into the file (0: not set). */
function shiftOffset(struct: Struct, id: number, shift: bigint): void {
  const f = field(struct, id);
  if (f !== undefined && f.type === T_I64 && (f.value as bigint) > 0n) f.value = (f.value as bigint) + shift;
}

// FileMetaData: 2 schema, 3 num_rows, 4 row_groups. RowGroup: 1 columns, 5 file_offset,
// 7 ordinal. ColumnChunk: 1 file_path, 2 file_offset, 3 meta_data, 4 offset_index_offset,
// 6 column_index_offset. ColumnMetaData: 9 data_page_offset, 10 index_page_offset,
// 11 dictionary_page_offset, 14 bloom_filter_offset.
function shiftRowGroup(rowGroup: Struct, shift: bigint, ordinal: number): void {
  shiftOffset(rowGroup, 5, shift);
  const ordinalField = field(rowGroup, 7);
  if (ordinalField !== undefined) ordinalField.value = ordinal;
  const columns = field(rowGroup, 1);
  if (columns === undefined) throw new Error('a row group without columns');
  for (const chunk of (columns.value as List).items as Struct[]) {
    if (field(chunk, 1) !== undefined) throw new Error('a column chunk in another file (file_path): not joined');
    shiftOffset(chunk, 2, shift);
    // An offset index (4 offset_index_offset, 5 offset_index_length) lies in the file's
    // body and holds each page's absolute offset, which the shift would leave pointing
    // into another file's bytes: it is dropped (it is optional; readers then find the
    // pages from the chunk's own offsets). A column index holds only statistics.
    for (let i = chunk.length - 1; i >= 0; i--) if (chunk[i]!.id === 4 || chunk[i]!.id === 5) chunk.splice(i, 1);
    shiftOffset(chunk, 6, shift);
    const meta = field(chunk, 3);
    if (meta !== undefined) for (const id of [9, 10, 11, 14]) shiftOffset(meta.value as Struct, id, shift);
  }
}

/** Reads a Parquet file's footer: where its data ends and its FileMetaData. */
async function footerOf(path: string): Promise<{ dataEnd: number; meta: Struct }> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(8);
    await file.read(head, 0, 4, 0);
    await file.read(tail, 0, 8, size - 8);
    if (size < 12 || !head.equals(MAGIC) || !tail.subarray(4).equals(MAGIC)) throw new Error(`${path} is not a Parquet file`);
    const length = tail.readUInt32LE(0);
    const dataEnd = size - 8 - length;
    if (dataEnd < 4) throw new Error(`${path}: its footer length ${length} does not fit its ${size} bytes`);
    const footer = Buffer.alloc(length);
    await file.read(footer, 0, length, dataEnd);
    const reader = new Reader(footer);
    const meta = reader.struct();
    return { dataEnd, meta };
  } finally {
    await file.close();
  }
}

/**
 * Writes `paths` (Parquet files of one schema, in order) as one Parquet file at `out`:
 * their row groups in that order, bytes copied as they are. Returns the rows and row
 * groups written.
 */
export async function concatParquet(paths: readonly string[], out: string): Promise<{ rows: number; rowGroups: number }> {
  if (paths.length === 0) throw new Error('no Parquet files to join');
  const footers = [];
  for (const path of paths) footers.push(await footerOf(path));
  const schemaOf = (meta: Struct): Buffer => {
    const schema = field(meta, 2);
    if (schema === undefined) throw new Error('a Parquet footer without a schema');
    const writer = new Writer();
    writer.value(schema.type, schema.value);
    return writer.bytes();
  };
  const schema = schemaOf(footers[0].meta);
  for (const [i, footer] of footers.entries()) if (!schemaOf(footer.meta).equals(schema)) throw new Error(`${paths[i]} has another schema than ${paths[0]}: not joined`);
  const output = await open(out, 'w');
  try {
    await output.write(MAGIC, 0, 4, 0);
    let position = 4;
    let rows = 0n;
    const rowGroups: Value[] = [];
    const buffer = Buffer.alloc(4 * 1024 * 1024);
    for (const [i, path] of paths.entries()) {
      const { dataEnd, meta } = footers[i];
      const shift = BigInt(position - 4);
      for (const rowGroup of ((field(meta, 4)?.value as List | undefined)?.items ?? []) as Struct[]) {
        shiftRowGroup(rowGroup, shift, rowGroups.length);
        rowGroups.push(rowGroup);
      }
      rows += field(meta, 3)?.value as bigint;
      const input = await open(path, 'r');
      try {
        for (let offset = 4; offset < dataEnd; ) {
          const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, dataEnd - offset), offset);
          if (bytesRead <= 0) throw new Error(`${path} ended at ${offset} of ${dataEnd} bytes while it was copied`);
          let written = 0;
          while (written < bytesRead) {
            const { bytesWritten } = await output.write(buffer, written, bytesRead - written, position + written);
            if (bytesWritten <= 0) throw new Error(`writing ${out} made no progress at ${position + written}`);
            written += bytesWritten;
          }
          offset += bytesRead;
          position += bytesRead;
        }
      } finally {
        await input.close();
      }
    }
    // the first file's footer with every file's row groups
    const meta: Struct = footers[0].meta.map((f) => {
      if (f.id === 3) return { ...f, value: rows };
      if (f.id === 4) return { ...f, value: { elemType: T_STRUCT, items: rowGroups } };
      return f;
    });
    const writer = new Writer();
    writer.struct(meta);
    const footer = writer.bytes();
    const tail = Buffer.alloc(8);
    tail.writeUInt32LE(footer.length, 0);
    MAGIC.copy(tail, 4);
    const end = Buffer.concat([footer, tail]);
    let written = 0;
    while (written < end.length) {
      const { bytesWritten } = await output.write(end, written, end.length - written, position + written);
      if (bytesWritten <= 0) throw new Error(`writing ${out}'s footer made no progress`);
      written += bytesWritten;
    }
    return { rows: Number(rows), rowGroups: rowGroups.length };
  } finally {
    await output.close();
  }
}
