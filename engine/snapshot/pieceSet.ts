// The snapshot body as keyed pieces: head, piece, ",", piece, ..., tail, joined into
// one gzip member. A piece is a run of array elements' JSON; its key names it (and,
// with compareKeys, places it) and optional member keys say what it holds. set()
// recompresses that piece only; assemble() returns the cached member until something
// changes. setDeferred() places a piece at once and has it compressed, with its CRC-32,
// on a worker thread (compressionWorkers.ts): settle() resolves once every deferred
// piece has its bytes, settleSync() compresses the rest on this thread.

import { crc32 } from 'node:zlib';
import { compressOnWorker, type CompressionTicket } from './compressionWorkers.ts';
import { aligned, compressPiece, deflatedBytes, DEFAULT_PIECE_LEVEL, storedBlock, type DeflatedPiece } from './deflatePiece.ts';
import { GzipJoiner, type GzipMember } from './gzipMember.ts';
import { keptCopy, keptText } from '../keptBytes.ts';

/** A piece whose deflated bytes and CRC are still being made on a worker thread. */
class DeferredPiece implements DeflatedPiece {
  deflated: Buffer = EMPTY_BYTES;
  crc = 0;
  /** Its compression on a worker thread, cancelled when the piece leaves the body or is compressed here. */
  ticket: CompressionTicket | null = null;
  readonly rawLength: number;
  constructor(public raw: Buffer | null) {
    this.rawLength = raw!.length;
  }
}

const EMPTY_BYTES = Buffer.alloc(0);

export interface PieceSetOptions {
  /** zlib level for pieces (head, tail and separators are stored blocks). */
  level?: number;
  /** Keeps pieces sorted by key; without it new keys go last. */
  compareKeys?: (a: string, b: string) => number;
  /** Literal between consecutive pieces; default ",". */
  separator?: string;
  head?: string | Uint8Array;
  tail?: string | Uint8Array;
}

interface PieceEntry {
  /**
   * Position in key order (the piece sits at joiner index 1 + 2 * position), kept only
   * in a set without compareKeys; a sorted set finds it by binary search (positionOf).
   */
  position: number;
  members: readonly string[];
}

const NO_MEMBERS: readonly string[] = Object.freeze([]);

function toBytes(text: string | Uint8Array): Uint8Array {
  return typeof text === 'string' ? keptText(text) : text;
}

export class PieceSet {
  private readonly level: number;
  private readonly compareKeys: ((a: string, b: string) => number) | undefined;
  private readonly separator: DeflatedPiece;
  /** [head, piece0, sep, piece1, ..., sep, pieceN-1, tail]. */
  private readonly joiner = new GzipJoiner();
  private readonly order: string[] = [];
  private readonly entries = new Map<string, PieceEntry>();
  private readonly pieceByMember = new Map<string, string>();
  private headBytes: Buffer;
  private readonly tailBytes: Buffer;
  private changes = 0;
  /** Deferred pieces still in the body whose bytes have not arrived. */
  private readonly pending = new Set<DeferredPiece>();
  /** Raw bytes of the pieces in `pending`. */
  private pendingRaw = 0;
  private settledWaiters: Array<() => void> = [];

  constructor(options: PieceSetOptions = {}) {
    this.level = options.level ?? DEFAULT_PIECE_LEVEL;
    compressPiece(Buffer.from('{}'), this.level); // rejects a bad level now, not on the first set()
    this.compareKeys = options.compareKeys;
    this.separator = storedBlock(toBytes(options.separator ?? ','));
    this.headBytes = keptCopy(toBytes(options.head ?? ''));
    this.tailBytes = keptCopy(toBytes(options.tail ?? ''));
    this.joiner.push(storedBlock(this.headBytes), storedBlock(this.tailBytes));
  }

  get size(): number {
    return this.order.length;
  }

  /** Bumped by every set() and remove(), and by a head or tail that really changed. */
  get version(): number {
    return this.changes;
  }

  /** Piece keys in body order (a live view: read it, do not keep or change it). */
  keys(): readonly string[] {
    return this.order;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  membersOf(key: string): readonly string[] | undefined {
    return this.entries.get(key)?.members;
  }

  pieceKeyOf(member: string): string | undefined {
    return this.pieceByMember.get(member);
  }

  /** Replaces the head (e.g. '{"updated":...,"count":N,"events":['); identical bytes change nothing. */
  setHead(text: string | Uint8Array): void {
    const bytes = toBytes(text);
    if (this.headBytes.equals(bytes)) return;
    this.headBytes = keptCopy(bytes);
    this.joiner.replace(0, storedBlock(this.headBytes));
    this.changes++;
  }

  /**
   * Compresses `json` as the piece `key` (adding it in order if new); other pieces
   * are untouched. `members` replaces the piece's member keys; omitted keeps them.
   * `json` must be one or more whole array elements: an empty piece would leave two
   * commas in a row, so remove() a piece that has no events left.
   */
  set(key: string, json: string | Uint8Array, members?: readonly string[]): void {
    this.place(key, compressPiece(toBytes(json), this.level), members);
  }

  /**
   * set(), but the piece is compressed (and its CRC computed) on a worker thread:
   * `raw` (non-empty; the set keeps it until then, so the caller must not change it)
   * is in the body's length at once, its bytes and CRC once settle() resolves.
   */
  setDeferred(key: string, raw: Buffer, members?: readonly string[]): void {
    const piece = new DeferredPiece(raw);
    this.pending.add(piece);
    this.pendingRaw += piece.rawLength;
    this.place(key, piece, members);
    piece.ticket = compressOnWorker(raw, this.level, (error, deflated, crc) => {
      if (!this.pending.has(piece)) return; // replaced, removed or compressed by settleSync meanwhile
      if (error === null && deflated !== null) {
        piece.deflated = aligned(deflated);
        piece.crc = crc;
      } else {
        compressHere(piece, this.level); // the worker failed: once more, here
      }
      piece.raw = null;
      this.pending.delete(piece);
      this.pendingRaw -= piece.rawLength;
      if (this.pending.size === 0) this.wakeSettled();
    });
  }

  /** Deferred pieces whose bytes have not arrived yet. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Raw bytes of the deferred pieces whose bytes have not arrived yet. */
  get pendingBytes(): number {
    return this.pendingRaw;
  }

  /** Resolves once every deferred piece in the body has its bytes. */
  settle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /** Compresses the deferred pieces still waiting, on this thread. */
  settleSync(): void {
    if (this.pending.size === 0) return;
    for (const piece of this.pending) {
      piece.ticket?.cancel();
      compressHere(piece, this.level);
      piece.raw = null;
    }
    this.pending.clear();
    this.pendingRaw = 0;
    this.wakeSettled();
  }

  private wakeSettled(): void {
    const waiters = this.settledWaiters;
    this.settledWaiters = [];
    for (const wake of waiters) wake();
  }

  private place(key: string, piece: DeflatedPiece, members: readonly string[] | undefined): void {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.insertPiece(key, piece, members ?? NO_MEMBERS);
    } else {
      const index = 1 + 2 * this.positionOf(key, entry);
      this.forget(this.joiner.at(index));
      this.joiner.replace(index, piece);
      if (members !== undefined) this.indexMembers(key, entry, members);
    }
    this.changes++;
  }

  /** A deferred piece leaving the body is no longer waited for. */
  private forget(piece: DeflatedPiece): void {
    if (!(piece instanceof DeferredPiece) || !this.pending.delete(piece)) return;
    this.pendingRaw -= piece.rawLength;
    piece.ticket?.cancel(); // still queued: its memory goes back now, and no thread compresses it
    if (this.pending.size === 0) this.wakeSettled();
  }

  remove(key: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    const position = this.positionOf(key, entry);
    this.forget(this.joiner.at(1 + 2 * position));
    if (this.order.length === 1) this.joiner.remove(1, 1);
    else if (position === 0) this.joiner.remove(1, 2); // the piece and the separator after it
    else this.joiner.remove(2 * position, 2); // the separator before it and the piece
    this.order.splice(position, 1);
    this.renumberFrom(position);
    this.unindexMembers(key, entry.members);
    this.entries.delete(key);
    this.changes++;
    return true;
  }

  /** The whole body as one gzip member; the same object while nothing changes. Deferred pieces still waiting are compressed here first. */
  assemble(): GzipMember {
    this.settleSync();
    return this.joiner.build();
  }

  private insertPiece(key: string, piece: DeflatedPiece, members: readonly string[]): void {
    const position = this.positionFor(key);
    const count = this.order.length;
    if (count === 0) this.joiner.insert(1, piece);
    else if (position === 0) this.joiner.insert(1, piece, this.separator);
    else this.joiner.insert(2 * position, this.separator, piece);
    this.order.splice(position, 0, key);
    const entry: PieceEntry = { position, members: NO_MEMBERS };
    this.entries.set(key, entry);
    this.renumberFrom(position + 1);
    this.indexMembers(key, entry, members);
  }

  /** Binary search for the first key that sorts after `key`. */
  private positionFor(key: string): number {
    const compare = this.compareKeys;
    if (compare === undefined) return this.order.length;
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compare(this.order[mid], key) <= 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /**
   * Where the piece `key` sits in key order. A sorted set (compareKeys) searches `order`:
   * keeping a position in every entry cost a walk of all later entries per insert and
   * remove, and a moving board inserts and removes pieces all over the body (rows turn
   * hot and cool, events are re-cut): with the history variant's ~55,000 pieces on the
   * large board that walk took 27% of the main thread while its first version was
   * built at 1,000 updates/s.
   */
  private positionOf(key: string, entry: PieceEntry): number {
    const compare = this.compareKeys;
    if (compare === undefined) return entry.position;
    let low = 0;
    let high = this.order.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const order = compare(this.order[mid], key);
      if (order === 0) return mid;
      if (order < 0) low = mid + 1;
      else high = mid - 1;
    }
    throw new Error(`piece ${key} is missing from the set's key order`);
  }

  /** Keeps entries' positions in a set without compareKeys (new keys go last, so only a remove shifts them). */
  private renumberFrom(position: number): void {
    if (this.compareKeys !== undefined) return;
    for (let i = position; i < this.order.length; i++) this.entries.get(this.order[i])!.position = i;
  }

  private indexMembers(key: string, entry: PieceEntry, members: readonly string[]): void {
    if (entry.members === members) return;
    this.unindexMembers(key, entry.members);
    entry.members = members.length === 0 ? NO_MEMBERS : members.slice();
    for (const member of entry.members) this.pieceByMember.set(member, key);
  }

  /** Only drops members still pointing here: another piece may have claimed one since. */
  private unindexMembers(key: string, members: readonly string[]): void {
    for (const member of members) {
      if (this.pieceByMember.get(member) === key) this.pieceByMember.delete(member);
    }
  }
}

function compressHere(piece: DeferredPiece, level: number): void {
  piece.deflated = deflatedBytes(piece.raw!, level);
  piece.crc = crc32(piece.raw!);
}
