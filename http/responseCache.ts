// Per-route response cache (a 304 never serializes the body). Entries are keyed by the raw path+query
// as received (a repeated poll does no parsing) and by the canonical request (path +
// normalized query), both pointing at one entry. An entry holds the validity token
// its body was built under, the identity body and its strong ETag, and lazily the
// gzip and MessagePack variants. Bounded by entry count and bytes, least recently
// used first out (Map iteration order is insertion order; a hit re-inserts).
import { gzipSync } from 'node:zlib';
import { pack } from 'msgpackr';
import { etagOf, variantEtag, type VariantSuffix } from './etag.ts';
import { GZIP_LEVEL, GZIP_MIN_BYTES } from './negotiate.ts';

/** Variant index: bit 1 = MessagePack, bit 0 = gzip. */
export const IDENTITY = 0;
export const MSGPACK = 2;
const SUFFIX: readonly VariantSuffix[] = ['', '-gz', '-mp', '-mp-gz'];
export const VARIANT_CONTENT_TYPE: readonly string[] = [
  'application/json; charset=utf-8',
  'application/json; charset=utf-8',
  'application/msgpack',
  'application/msgpack',
];

export interface CacheEntry<R> {
  /** The validity token the body was built under. */
  token: number;
  /** The request that built it: validity and rebuilds run on it without reparsing. */
  request: R;
  /** Bytes per variant (identity, gzip, msgpack, msgpack+gzip); null until first asked. */
  bytes: (Buffer | null)[];
  etags: (string | null)[];
  /** How many cache keys point here. */
  keys: number;
  size: number;
}

export function newEntry<R>(request: R, token: number, body: Buffer): CacheEntry<R> {
  return { token, request, bytes: [body, null, null, null], etags: [etagOf(body), null, null, null], keys: 0, size: body.length };
}

/**
 * The variant index to send: MessagePack if asked, gzip on top if asked and the
 * uncompressed variant is over 1 KiB. Builds the variant on first use.
 */
export function selectVariant<R>(entry: CacheEntry<R>, msgpack: boolean, gzip: boolean): number {
  const base = msgpack ? MSGPACK : IDENTITY;
  const plain = entry.bytes[base] ?? build(entry, base);
  if (!gzip || plain.length <= GZIP_MIN_BYTES) return base;
  if (entry.bytes[base + 1] === null) build(entry, base + 1);
  return base + 1;
}

function build<R>(entry: CacheEntry<R>, variant: number): Buffer {
  const bytes =
    variant === MSGPACK
      ? pack(JSON.parse(entry.bytes[IDENTITY]!.toString('utf8')))
      : gzipSync(entry.bytes[variant - 1] ?? build(entry, variant - 1), { level: GZIP_LEVEL });
  entry.bytes[variant] = bytes;
  entry.etags[variant] = variantEtag(entry.etags[IDENTITY]!, SUFFIX[variant]!);
  entry.size += bytes.length;
  return bytes;
}

/**
 * A rebuilt body under a new token. A byte-identical body keeps its ETag and
 * variants; a different one gets a new ETag and drops the variants.
 * Returns true when the body changed.
 */
export function refreshEntry<R>(entry: CacheEntry<R>, token: number, body: Buffer): boolean {
  entry.token = token;
  if (body.equals(entry.bytes[IDENTITY]!)) return false;
  entry.bytes[0] = body;
  entry.bytes[1] = entry.bytes[2] = entry.bytes[3] = null;
  entry.etags[0] = etagOf(body);
  entry.etags[1] = entry.etags[2] = entry.etags[3] = null;
  entry.size = body.length;
  return true;
}

/** A key's place in the cache: its entry and when the key was last moved to the young end. */
interface Slot<R> {
  entry: CacheEntry<R>;
  touched: number;
}

export class ResponseCache<R> {
  readonly capacity: number;
  readonly maxBytes: number;
  private readonly map = new Map<string, Slot<R>>();
  private bytes = 0;
  /** Counts moves of keys to the young end (inserts and refreshed hits). */
  private tick = 0;

  constructor(capacity = 1024, maxBytes = 64 * 1024 * 1024) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
  }

  get size(): number {
    return this.map.size;
  }

  /**
   * A hit moves the key to the young end only when more than a quarter of the keys
   * moved there since its own last move: a key hit that recently is among the
   * youngest already, and a hot key's hit then costs one Map lookup instead of
   * get + delete + set (three hashes of a fresh key string per request, measured as
   * the largest JS cost of a cached request).
   */
  get(key: string): CacheEntry<R> | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    if (this.tick - slot.touched > this.map.size >> 2) {
      this.map.delete(key);
      this.map.set(key, slot);
      slot.touched = ++this.tick;
    }
    return slot.entry;
  }

  /** Whether key is cached, without counting as a hit. */
  has(key: string): boolean {
    return this.map.has(key);
  }

  /** Stores entry under key (an entry may be stored under several keys). */
  set(key: string, entry: CacheEntry<R>): void {
    const previous = this.map.get(key);
    if (previous !== undefined && previous.entry === entry) return;
    if (previous !== undefined) {
      this.release(previous.entry);
      previous.entry = entry;
    } else {
      this.map.set(key, { entry, touched: ++this.tick });
    }
    if (entry.keys++ === 0) this.bytes += entry.size;
    this.evict();
  }

  /** selectVariant with byte accounting. */
  select(entry: CacheEntry<R>, msgpack: boolean, gzip: boolean): number {
    const before = entry.size;
    const variant = selectVariant(entry, msgpack, gzip);
    if (entry.size !== before) this.resized(entry, before);
    return variant;
  }

  /** refreshEntry with byte accounting. */
  refresh(entry: CacheEntry<R>, token: number, body: Buffer): boolean {
    const before = entry.size;
    const changed = refreshEntry(entry, token, body);
    if (entry.size !== before) this.resized(entry, before);
    return changed;
  }

  private resized(entry: CacheEntry<R>, previousSize: number): void {
    if (entry.keys > 0) this.bytes += entry.size - previousSize;
    this.evict();
  }

  get totalBytes(): number {
    return this.bytes;
  }

  private evict(): void {
    while (this.map.size > this.capacity || (this.bytes > this.maxBytes && this.map.size > 1)) {
      const oldest = this.map.keys().next().value as string;
      const slot = this.map.get(oldest)!;
      this.map.delete(oldest);
      this.release(slot.entry);
    }
  }

  private release(entry: CacheEntry<R>): void {
    if (--entry.keys === 0) this.bytes -= entry.size;
  }
}
