// The body of a worker thread that packs one value with msgpackr and takes its CRC-32
// (a checkpoint body's manifest, engine/checkpointBlocks.ts), and the CRC-32 of the
// blocks that follow it in the body (hundreds of megabytes on a large board, which would
// hold the main event loop for a second or more). Plain JavaScript on purpose: it needs
// only msgpackr and node:zlib, so it starts without the TypeScript loader the service may
// run under.
// packInWorker.ts starts it, sends { value, options, blocks } once (the buffers of the
// board's copy transferred, not copied) and gets back { buffer, byteOffset, byteLength, crc,
// blocksCrc, blocks } (the blocks transferred back) or { error }; the worker then exits,
// returning the packer's buffers to the system.
import { parentPort } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';

const ZEROS = new Uint8Array(8);

/** The blocks as a body holds them: each block's bytes, then zero bytes up to a multiple of 8 (engine/checkpointBlocks.ts, blocksCrc: the same rule). */
function blocksCrc(blocks) {
  let crc = 0;
  for (const block of blocks) {
    // an empty block adds nothing (node:zlib's crc32 of an empty view does not give its seed back)
    if (block.byteLength > 0) crc = crc32(new Uint8Array(block.buffer, block.byteOffset, block.byteLength), crc);
    const pad = (8 - (block.byteLength % 8)) % 8;
    if (pad > 0) crc = crc32(ZEROS.subarray(0, pad), crc);
  }
  return crc >>> 0;
}

parentPort.once('message', ({ value, options, blocks = [] }) => {
  try {
    const packed = new Packr(options).pack(value);
    const crc = crc32(packed) >>> 0;
    // every block is this thread's now (transferred or cloned to it): all go back without a copy
    const transfer = new Set([packed.buffer]);
    for (const block of blocks) if (block.buffer instanceof ArrayBuffer) transfer.add(block.buffer);
    parentPort.postMessage({ buffer: packed.buffer, byteOffset: packed.byteOffset, byteLength: packed.byteLength, crc, blocksCrc: blocksCrc(blocks), blocks }, [...transfer]);
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
