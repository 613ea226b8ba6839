// msgpackr's pack and a CRC-32 of the result, run in a worker thread (packWorker.mjs) so
// the event loop stays free while a large checkpoint body is built; with it, the CRC-32
// of the typed arrays that follow the packed value in the body (a format 2 body's blocks,
// engine/checkpointBlocks.ts). The value and the blocks must be structured-cloneable;
// `transfer` lists the ArrayBuffers the caller owns outright (its copy of the board),
// which move to the worker (unusable here meanwhile) instead of being copied; the blocks
// come back with the answer.

import { Worker } from 'node:worker_threads';

export interface Packed {
  body: Buffer;
  /** CRC-32 of body. */
  crc: number;
  /** The blocks handed in, back from the worker (the views handed in are detached). */
  blocks: ArrayBufferView[];
  /** CRC-32 of the blocks as a body holds them (each then its zero padding to 8 bytes). */
  blocksCrc: number;
}

interface Reply {
  buffer?: ArrayBuffer;
  byteOffset?: number;
  byteLength?: number;
  crc?: number;
  blocksCrc?: number;
  blocks?: ArrayBufferView[];
  error?: string;
}

export function packInWorker(value: unknown, blocks: readonly ArrayBufferView[], transfer: readonly ArrayBuffer[], options: Record<string, unknown>): Promise<Packed> {
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
      if (reply.error !== undefined || reply.buffer === undefined || reply.blocks === undefined) settle(() => reject(new Error(`packing in a worker thread failed: ${reply.error ?? 'no result'}`)));
      else settle(() => resolve({ body: Buffer.from(reply.buffer!, reply.byteOffset, reply.byteLength), crc: reply.crc!, blocks: reply.blocks!, blocksCrc: reply.blocksCrc! }));
    });
    worker.once('error', (error) => settle(() => reject(new Error(`the packing worker thread failed: ${error.message}`, { cause: error }))));
    worker.once('exit', (code) => settle(() => reject(new Error(`the packing worker thread exited (${code}) before answering`))));
    worker.postMessage({ value, options, blocks }, [...new Set(transfer)]);
  });
}
