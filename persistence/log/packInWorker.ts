// msgpackr's pack and a CRC-32 of the result, run in a worker thread (packWorker.mjs) so
// the event loop stays free while a large checkpoint body is built. The value must be
// structured-cloneable; `transfer` lists the ArrayBuffers it owns, which move to the
// worker (they are unusable here afterwards) instead of being copied.

import { Worker } from 'node:worker_threads';

export interface Packed {
  body: Buffer;
  /** CRC-32 of body. */
  crc: number;
}

interface Reply {
  buffer?: ArrayBuffer;
  byteOffset?: number;
  byteLength?: number;
  crc?: number;
  error?: string;
}

export function packInWorker(value: unknown, transfer: readonly ArrayBuffer[], options: Record<string, unknown>): Promise<Packed> {
  return new Promise<Packed>((resolve, reject) => {
    // execArgv []: the worker is plain JavaScript and needs no loader of the parent's
    const worker = new Worker(new URL('./packWorker.mjs', import.meta.url), { execArgv: [] });
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
      void worker.terminate();
    };
    worker.once('message', (reply: Reply) => {
      if (reply.error !== undefined || reply.buffer === undefined) settle(() => reject(new Error(`packing in a worker thread failed: ${reply.error ?? 'no result'}`)));
      else settle(() => resolve({ body: Buffer.from(reply.buffer!, reply.byteOffset, reply.byteLength), crc: reply.crc! }));
    });
    worker.once('error', (error) => settle(() => reject(new Error(`the packing worker thread failed: ${error.message}`, { cause: error }))));
    worker.once('exit', (code) => settle(() => reject(new Error(`the packing worker thread exited (${code}) before answering`))));
    worker.postMessage({ value, options }, transfer as ArrayBuffer[]);
  });
}
