// The body of a worker thread that packs one value with msgpackr and takes its CRC-32
// (a checkpoint's body: hundreds of megabytes on a large board, which would hold the
// main event loop for seconds). Plain JavaScript on purpose: it needs only msgpackr and
// node:zlib, so it starts without the TypeScript loader the service may run under.
// packInWorker.ts starts it, sends { value, options } once (the value's ArrayBuffers
// transferred, not copied) and gets back { buffer, byteOffset, byteLength, crc } or
// { error }; the worker then exits, returning the packer's buffers to the system.
import { parentPort } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';

parentPort.once('message', ({ value, options }) => {
  try {
    const packed = new Packr(options).pack(value);
    const crc = crc32(packed) >>> 0;
    parentPort.postMessage({ buffer: packed.buffer, byteOffset: packed.byteOffset, byteLength: packed.byteLength, crc }, [packed.buffer]);
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
