// Where a background refresh compresses its pieces: a few worker threads, each
// running zlib's deflate (the same call and options as deflatePiece.ts, so the same
// bytes) AND the piece's CRC-32, so the event loop does neither. Neighbouring pieces
// travel together, in batches of about BATCH_BYTES (one message each), not one per piece.
//
// Why threads of our own and not zlib's asynchronous calls on the libuv threadpool:
// the threadpool cannot compute a CRC (node:zlib's crc32 runs on the calling thread),
// and its threads cannot be told apart from V8's own helper threads, so they cannot
// be given a lower priority alone. A worker lowers its own (Linux nice is per thread;
// os.setPriority() without a pid sets the calling thread's): where the workers share
// a core with the event loop (a process given one core, or a machine busier than its
// cores), the scheduler runs the event loop first and compression in what is left,
// instead of giving every runnable thread an equal turn. Measured on the medium board
// with the server pinned to one core (bench/snapshot.bench.ts): with four threadpool
// threads compressing at normal priority the event loop got about a fifth of the core
// and a poll's time to first byte reached hundreds of ms while a refresh ran.
//
// One pool per process, started on first use; its threads live as long as the
// process and keep it alive only while they have work (someone awaits it). It runs
// a thread per core (at most MAX_DEFAULT_THREADS) unless setCompressionThreads() says
// otherwise before the first piece.
//
// The queue is on the main thread: a thread holds at most BATCHES_PER_THREAD batches
// of about BATCH_BYTES, and gets the next when it answers. A job whose piece left the
// body meanwhile (re-made, removed, or compressed on the main thread) is dropped
// at once (its ticket is cancelled: its memory goes back to the pool and its callback
// never runs), so the queue holds at most one job per piece in the body. Measured on
// the large board with history at 10,000 updates/s on one core: with every job sent at
// once, the threads (below the event loop's priority) fell ever further behind, the
// queue and the memory it held grew for as long as the run lasted, no version was
// published in 30 s, and the main thread spent 47% of its time making fresh shared
// memory for pieces that the held queue kept from being reused.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { pieceBuffers } from './pieceBuffers.ts';

/** Default pool size at most: compression past 8 threads waits on the main thread's rendering anyway. */
const MAX_DEFAULT_THREADS = 8;
/** Raw bytes sent to a thread in one message, about (neighbouring pieces together): ~5 ms of level-1 deflate. */
const BATCH_BYTES = 1 << 20;
/** Batches a thread holds at most: one it compresses, one waiting, so it does not idle on a round trip. */
const BATCHES_PER_THREAD = 2;

/**
 * Linux nice value the workers give themselves. Against the event loop's 0 a runnable
 * worker gets about a tenth of the scheduler's weight, so the event loop runs first
 * whenever it has work. Not the lowest (19): on a machine whose cores other processes
 * kept busy (a load of 15 on 2 cores), workers at 19 got so little CPU that no new
 * version was published for seconds; 10 is a middle choice, not measured against 19
 * on an idle machine.
 */
export const WORKER_NICE = 10;

export type CompressedCallback = (error: Error | null, deflated: Buffer | null, crc: number) => void;

/** A queued compression: cancel() when its result is no longer wanted (then `done` is not called). */
export interface CompressionTicket {
  cancel(): void;
}

const NO_BYTES = new Uint8Array(0);
const QUEUED = 0;
const SENT = 1;
const CANCELLED = 2;

class Job implements CompressionTicket {
  state = QUEUED;
  constructor(
    readonly pool: CompressionPool,
    public raw: Uint8Array,
    readonly level: number,
    readonly done: CompressedCallback,
  ) {}

  cancel(): void {
    this.pool.cancel(this);
  }
}

interface Batch {
  jobs: Job[];
}

/** The worker's code: plain CommonJS (an eval'd worker needs no loader). */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { constants, crc32, deflateRawSync } = require('node:zlib');
const { setPriority } = require('node:os');
try { setPriority(${WORKER_NICE}); } catch {}
const options = [];
for (let level = 0; level <= 9; level++) options.push({ level, finishFlush: constants.Z_SYNC_FLUSH });
parentPort.on('message', (message) => {
  const n = message.lengths.length;
  const data = message.data === null ? null : new Uint8Array(message.data);
  const outs = new Array(n);
  const crcs = new Uint32Array(n);
  let at = 0;
  let error = null;
  for (let i = 0; i < n; i++) {
    // A shared piece is read where it lies (its first lengths[i] bytes); the others come packed in one buffer.
    const raw = data === null ? new Uint8Array(message.shared[i], 0, message.lengths[i]) : data.subarray(at, at + message.lengths[i]);
    at += message.lengths[i];
    try {
      const deflated = deflateRawSync(raw, options[message.levels[i]]);
      // Each output its own buffer, moved (not copied) to the main thread, where it becomes the piece's bytes.
      const own = new Uint8Array(deflated.length);
      own.set(deflated);
      outs[i] = own.buffer;
      crcs[i] = crc32(raw);
    } catch (failure) {
      error = String(failure && failure.message || failure);
      outs[i] = new ArrayBuffer(0);
    }
  }
  parentPort.postMessage({ id: message.id, outs, crcs, error }, outs);
});
`;

interface Thread {
  worker: Worker;
  /** Batches sent and not answered. */
  inFlight: Map<number, Batch>;
  alive: boolean;
}

interface Answer {
  id: number;
  /** Each piece's deflated bytes (transferred). */
  outs: ArrayBuffer[];
  crcs: Uint32Array;
  error: string | null;
}

class CompressionPool {
  private threads: Thread[] = [];
  /** Jobs not sent yet, oldest first from queueHead. */
  private queued: Job[] = [];
  private queueHead = 0;
  private queuedBytes = 0;
  private flushQueued = false;
  private nextId = 1;
  constructor(readonly size: number) {}

  compress(raw: Uint8Array, level: number, done: CompressedCallback): Job {
    // A pooled piece's memory must not be handed to another piece while a thread reads it.
    if (Buffer.isBuffer(raw)) pieceBuffers.retain(raw);
    const job = new Job(this, raw, level, done);
    this.queued.push(job);
    this.queuedBytes += raw.length;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
    return job;
  }

  /** A queued job leaves the count and gives its memory back now; a sent one only loses its callback. */
  cancel(job: Job): void {
    if (job.state === QUEUED) {
      this.queuedBytes -= job.raw.length;
      releaseJob(job);
      job.raw = NO_BYTES; // the queue keeps the job until its turn, not the piece's bytes
    }
    job.state = CANCELLED;
  }

  /** Raw bytes queued and not yet sent to a thread. */
  get backlogBytes(): number {
    return this.queuedBytes;
  }

  private startThread(): Thread {
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'snapshot-compression', execArgv: [] });
    const thread: Thread = { worker, inFlight: new Map(), alive: true };
    worker.on('message', (message: Answer) => {
      const batch = thread.inFlight.get(message.id);
      if (batch === undefined) return;
      thread.inFlight.delete(message.id);
      if (thread.inFlight.size === 0) worker.unref();
      this.answer(thread, batch, message);
    });
    worker.on('error', (error) => this.fail(thread, error));
    worker.on('exit', (code) => this.fail(thread, new Error(`snapshot compression worker exited with code ${code}`)));
    worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
    return thread;
  }

  /** Tops every thread up to BATCHES_PER_THREAD batches from the queue, skipping cancelled jobs. */
  private flush(): void {
    this.flushQueued = false;
    if (this.queueHead === this.queued.length) return;
    while (this.threads.length < this.size) this.threads.push(this.startThread());
    for (;;) {
      const thread = this.leastBusy();
      if (thread === null) break;
      const jobs: Job[] = [];
      let bytes = 0;
      while (this.queueHead < this.queued.length && bytes < BATCH_BYTES) {
        const job = this.queued[this.queueHead++];
        if (job.state === CANCELLED) continue; // counted out and released when cancelled
        this.queuedBytes -= job.raw.length;
        job.state = SENT;
        jobs.push(job);
        bytes += job.raw.length;
      }
      if (jobs.length > 0) this.send(thread, jobs, bytes);
      if (this.queueHead === this.queued.length) break;
    }
    if (this.queueHead === this.queued.length) {
      this.queued = [];
      this.queueHead = 0;
    } else if (this.queueHead > 1024 && this.queueHead * 2 > this.queued.length) {
      this.queued = this.queued.slice(this.queueHead);
      this.queueHead = 0;
    }
  }

  /** The live thread with the fewest batches, if it has room for another. */
  private leastBusy(): Thread | null {
    let best: Thread | null = null;
    for (const thread of this.threads) if (best === null || thread.inFlight.size < best.inFlight.size) best = thread;
    return best !== null && best.inFlight.size < BATCHES_PER_THREAD ? best : null;
  }

  private send(thread: Thread, jobs: Job[], bytes: number): void {
    const lengths = new Int32Array(jobs.length);
    const levels = new Uint8Array(jobs.length);
    let shared: SharedArrayBuffer[] | null = [];
    for (let i = 0; i < jobs.length; i++) {
      const raw = jobs[i].raw;
      lengths[i] = raw.length;
      levels[i] = jobs[i].level;
      if (shared !== null && raw.buffer instanceof SharedArrayBuffer && raw.byteOffset === 0) shared.push(raw.buffer);
      else shared = null;
    }
    // Pieces made by sharedPiece() are read by the worker in place: the main thread
    // copies nothing. Others are packed into one transferred buffer.
    let data: ArrayBuffer | null = null;
    if (shared === null) {
      const packed = new Uint8Array(bytes);
      let at = 0;
      for (const job of jobs) {
        packed.set(job.raw, at);
        at += job.raw.length;
      }
      data = packed.buffer;
    }
    const id = this.nextId++;
    // While it has work the thread keeps the process alive (someone awaits it); idle, it does not.
    if (thread.inFlight.size === 0) thread.worker.ref();
    thread.inFlight.set(id, { jobs });
    thread.worker.postMessage({ id, data, shared, lengths, levels }, data === null ? [] : [data]);
  }

  private answer(thread: Thread, batch: Batch, message: Answer): void {
    for (let i = 0; i < batch.jobs.length; i++) {
      const job = batch.jobs[i];
      const out = message.outs[i];
      if (job.state !== CANCELLED) {
        if (message.error !== null && out.byteLength === 0) job.done(new Error(message.error), null, 0);
        else job.done(null, Buffer.from(out), message.crcs[i]);
      }
      releaseJob(job);
    }
    this.flush();
  }

  /** A thread failed: its batches are answered with the error (their callers compress them themselves); the next flush starts another. */
  private fail(thread: Thread, error: Error): void {
    if (!thread.alive) return;
    thread.alive = false;
    this.threads = this.threads.filter((other) => other !== thread);
    const batches = [...thread.inFlight.values()];
    thread.inFlight.clear();
    void thread.worker.terminate();
    for (const batch of batches) {
      for (const job of batch.jobs) {
        if (job.state !== CANCELLED) job.done(error, null, 0);
        releaseJob(job);
      }
    }
    this.flush(); // the next thread started takes the queue
  }
}

/** The thread is done reading the job's bytes (after its callback, which may still compress them here). */
function releaseJob(job: Job): void {
  if (Buffer.isBuffer(job.raw)) pieceBuffers.release(job.raw);
}

let pool: CompressionPool | null = null;

let threads = Math.max(1, Math.min(MAX_DEFAULT_THREADS, availableParallelism()));

/** Threads the pool runs (or will run once started). */
export function compressionThreads(): number {
  return threads;
}

/** Sets the pool's size (1..64) before its first use; later calls change nothing. Returns the size in force. */
export function setCompressionThreads(count: number): number {
  if (pool === null && Number.isInteger(count) && count >= 1 && count <= 64) threads = count;
  return threads;
}

/**
 * A copy of `bytes` in memory the worker threads can read in place (shared memory
 * from pieceBuffers.ts, reused once its holders released it): a piece made with it
 * is handed to compressOnWorker() without another copy on the main thread. The
 * caller must not change it afterwards. `extraBytes` more lie after it in the same
 * memory (outside the piece: `piece.buffer`), for the caller's own use.
 */
export function sharedPiece(bytes: Uint8Array, extraBytes = 0): Buffer {
  const piece = pieceBuffers.take(bytes.length, extraBytes);
  piece.set(bytes);
  return piece;
}

/**
 * Compresses `raw` (which must not change until `done` is called) as a snapshot
 * piece on a worker thread: `done` gets the raw DEFLATE bytes deflatedBytes() would
 * give and the CRC-32 of `raw`, or an error (then the caller compresses it itself).
 * Cancelling the ticket means `done` is not called (and, if the job was not sent yet,
 * its memory goes back now).
 */
export function compressOnWorker(raw: Uint8Array, level: number, done: CompressedCallback): CompressionTicket {
  if (pool === null) pool = new CompressionPool(threads);
  return pool.compress(raw, level, done);
}

/** Raw bytes waiting to be sent to a compression thread (cancelled jobs not counted). */
export function compressionBacklogBytes(): number {
  return pool === null ? 0 : pool.backlogBytes;
}
