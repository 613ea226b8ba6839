// The outbox read back once for every endpoint behind. An endpoint whose queue outgrew
// its memory cap, or every endpoint after a restart (deliveryQueue.ts: the queues are
// rebuilt from the outbox), reads the events after its cursor from alerts.db. Endpoints
// fall behind together (one outage of a receiver host, one restart of the service), so
// a thousand of them would read, decode, parse and encode the same rows a thousand
// times. Here the outbox is read in blocks of BLOCK_EVENTS consecutive seqs: a block is
// read with one query, each event parsed once (for the filters) and encoded once (the
// block's bodies joined by commas in one buffer, each event's bytes a view of it, so a
// delivery of consecutive events sends one piece: deliveryWorker.ts deliveryBody), and
// the last BLOCKS_KEPT blocks read are kept, shared by every endpoint whose cursor is in
// them. The newest block may not be full yet: it is kept with the newest seq it was read
// up to, and the events written since are read and added when it is asked for again
// (seqs are given in increasing order and never again, alertsStore.ts, so the rows read
// stay right). A prune drops what it deleted, so it empties the blocks.
import type { AlertEvent } from './alertEvent.ts';
import type { StoredEvent } from './alertEvent.ts';

export const BLOCK_EVENTS = 1024;
/** 16 blocks of 1,024 events of ~0.5 KB (body, bytes, parsed): ~25 MB at most. */
const BLOCKS_KEPT = 16;

/** An event read back: its body, its bytes (a view of its block's buffer) and its parsed form for the filters. */
export interface ReadBackEvent extends StoredEvent {
  bytes: Buffer;
  event: AlertEvent;
}

const COMMA = 0x2c;
const encoder = new TextEncoder();

interface Block {
  events: ReadBackEvent[];
  /** The outbox's newest seq when the block was last read: it holds every event up to here. */
  through: number;
}

export class OutboxReadBack {
  /** Blocks by number (block k holds seqs k*BLOCK_EVENTS+1 .. (k+1)*BLOCK_EVENTS), least recently used first. */
  private readonly blocks = new Map<number, Block>();
  /** Queries made (tests and the bench: endpoints behind together read each stretch once). */
  reads = 0;

  constructor(
    /** The outbox's rows with from < seq <= to, in seq order. */
    private readonly read: (from: number, to: number) => StoredEvent[],
    /** The outbox's newest seq. */
    private readonly newest: () => number,
  ) {}

  /** Block k's events up to the outbox's newest, in seq order (pruned ones absent). */
  block(k: number): ReadBackEvent[] {
    const end = (k + 1) * BLOCK_EVENTS;
    const through = Math.min(end, this.newest());
    let block = this.blocks.get(k);
    if (block !== undefined) {
      this.blocks.delete(k);
      this.blocks.set(k, block);
    } else {
      block = { events: [], through: k * BLOCK_EVENTS };
      this.blocks.set(k, block);
      if (this.blocks.size > BLOCKS_KEPT) this.blocks.delete(this.blocks.keys().next().value!);
    }
    // the block's end was not written yet when it was read: the events written since join it
    if (block.through < through) {
      this.reads++;
      for (const event of withBytes(this.read(block.through, through))) block.events.push(event);
      block.through = through;
    }
    return block.events;
  }

  /** The events of these seqs (ascending) in seq order, pruned ones absent; `known` serves those still in memory. */
  events(seqs: readonly number[], known: (seq: number) => StoredEvent | undefined): StoredEvent[] {
    const out: StoredEvent[] = [];
    let k = -1;
    let block: ReadBackEvent[] = [];
    let at = 0;
    for (const seq of seqs) {
      const event = known(seq);
      if (event !== undefined) {
        out.push(event);
        continue;
      }
      const want = blockOf(seq);
      if (want !== k) {
        k = want;
        block = this.block(k);
        at = 0;
      }
      while (at < block.length && block[at]!.seq < seq) at++;
      if (at < block.length && block[at]!.seq === seq) out.push(block[at]!);
    }
    return out;
  }

  /** Rows were deleted (a prune): the blocks kept may hold them. */
  clear(): void {
    this.blocks.clear();
  }
}

/** The block holding seq. */
export function blockOf(seq: number): number {
  return Math.floor((seq - 1) / BLOCK_EVENTS);
}

/** The rows' bodies encoded once, joined by commas in one buffer; each event parsed once. */
function withBytes(rows: readonly StoredEvent[]): ReadBackEvent[] {
  let joined = '';
  for (let i = 0; i < rows.length; i++) joined += i === 0 ? rows[i]!.body : `,${rows[i]!.body}`;
  const encoded = encoder.encode(joined);
  const buffer = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  const events: ReadBackEvent[] = [];
  let offset = 0;
  for (const row of rows) {
    // the row's UTF-8 length; the comma that must follow it checks the arithmetic
    const length = Buffer.byteLength(row.body, 'utf8');
    const parsed = JSON.parse(row.body) as Omit<AlertEvent, 'createdAt'>;
    events.push({
      seq: row.seq,
      id: row.id,
      type: row.type,
      createdAt: row.createdAt,
      body: row.body,
      bytes: buffer.subarray(offset, offset + length),
      event: { id: parsed.id, type: parsed.type, createdAt: row.createdAt, data: parsed.data },
    });
    offset += length + 1;
    if (offset - 1 < buffer.length && buffer[offset - 1] !== COMMA) throw new Error(`outbox read-back: the bytes of event ${row.seq} do not end at a comma`);
  }
  return events;
}
