// Sync-flushed pieces joined into one gzip member: real zlib, a real HTTP server and
// real curl decode it to exactly the concatenated raw pieces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createGunzip, crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { compressPiece, storedBlock, type DeflatedPiece } from '../../engine/snapshot/deflatePiece.ts';
import { FINAL_EMPTY_BLOCK, GZIP_HEADER, GzipJoiner, type GzipMember } from '../../engine/snapshot/gzipMember.ts';
import { SnapshotGzipError } from '../../engine/snapshot/errors.ts';


/** Snapshot-like JSON: repetitive keys, varying ids and prices, so zlib really compresses it. */
function eventJson(seed: number, rows: number): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < rows; i++) {
    const price = ((seed * 7919 + i * 104_729) % 400) - 200;
    parts.push(
      `{"id":"ev${seed}:book${i % 17}:TOTAL:FULL-OVER-${(i % 40) + 0.5}","sportsbook":"book${i % 17}",` +
        `"priceAmerican":${price},"line":${(i % 40) + 0.5},"suspended":${i % 31 === 0},"priceHistory":null}`,
    );
  }
  return Buffer.from(`{"id":"ev${seed}","odds":[${parts.join(',')}]}`);
}

function bodyOf(member: GzipMember): Buffer {
  const body = Buffer.concat(member.chunks as Buffer[]);
  assert.equal(body.length, member.byteLength);
  return body;
}

async function gunzipStreaming(member: GzipMember, chunkSize = 64 * 1024): Promise<Buffer> {
  const gunzip = createGunzip({ chunkSize });
  const out: Buffer[] = [];
  gunzip.on('data', (chunk: Buffer) => out.push(chunk));
  await new Promise<void>((resolve, reject) => {
    gunzip.on('end', resolve);
    gunzip.on('error', reject);
    Readable.from(member.chunks).pipe(gunzip);
  });
  return Buffer.concat(out);
}

/** Serves the member as a gzip body from 127.0.0.1:0 and returns what `curl --compressed` prints. */
async function curlDecoded(member: GzipMember): Promise<Buffer> {
  const server = createServer((_req, res) => {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Encoding': 'gzip',
      'Content-Length': member.byteLength,
    });
    for (const chunk of member.chunks) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      execFile(
        'curl',
        ['--silent', '--show-error', '--fail', '--compressed', `http://127.0.0.1:${port}/snapshot`],
        { encoding: 'buffer', maxBuffer: 256 << 20 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message} ${stderr.toString()}`)) : resolve(stdout)),
      );
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function joinAll(pieces: DeflatedPiece[]): GzipJoiner {
  const joiner = new GzipJoiner();
  for (const piece of pieces) joiner.push(piece);
  return joiner;
}

test('compressPiece ends byte-aligned on the sync marker and inflates back alone', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 3000 }), fc.integer({ min: 0, max: 9 }), (bytes, level) => {
      const piece = compressPiece(bytes, level);
      assert.deepEqual([...piece.deflated.subarray(-4)], [0x00, 0x00, 0xff, 0xff]);
      assert.equal(piece.crc, crc32(bytes));
      assert.equal(piece.rawLength, bytes.length);
      assert.ok(inflateRawSync(Buffer.concat([piece.deflated, FINAL_EMPTY_BLOCK])).equals(bytes));
    }),
    { numRuns: 200 },
  );
});

test('a small compressed piece owns exactly its bytes, not zlib\'s 16 KB output chunk', () => {
  const piece = compressPiece(eventJson(1, 200));
  assert.ok(piece.deflated.length < 16 * 1024);
  assert.equal(piece.deflated.buffer.byteLength, piece.deflated.length);
});

test('compressPiece of nothing is an empty piece and a bad level is a named error', () => {
  const empty = compressPiece(new Uint8Array(0));
  assert.equal(empty.deflated.length, 0);
  assert.equal(empty.crc, 0);
  assert.equal(empty.rawLength, 0);
  for (const level of [-1, 10, 1.5]) {
    assert.throws(() => compressPiece(Buffer.from('x'), level), (e: unknown) => e instanceof SnapshotGzipError && e.code === 'invalid_level');
  }
});

test('storedBlock writes non-final stored blocks, split at 65535 bytes', () => {
  const comma = storedBlock(Buffer.from(','));
  assert.deepEqual([...comma.deflated], [0x00, 0x01, 0x00, 0xfe, 0xff, 0x2c]);
  const big = Buffer.alloc(150_000, 0x41);
  const stored = storedBlock(big);
  assert.equal(stored.deflated.length, big.length + 5 * 3);
  assert.equal(stored.crc, crc32(big));
  assert.ok(inflateRawSync(Buffer.concat([stored.deflated, FINAL_EMPTY_BLOCK])).equals(big));
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
      const piece = storedBlock(bytes);
      assert.ok(inflateRawSync(Buffer.concat([piece.deflated, FINAL_EMPTY_BLOCK])).equals(bytes));
    }),
  );
});

test('the joined member is one gzip member that zlib, streaming gunzip and curl decode to the raw pieces', async () => {
  const raws = Array.from({ length: 40 }, (_, i) => eventJson(i, 50 + i * 20));
  const pieces = raws.map((raw, i) => (i % 5 === 4 ? storedBlock(raw) : compressPiece(raw, i % 3 === 0 ? 6 : 1)));
  const member = joinAll(pieces).build();
  const expected = Buffer.concat(raws);
  const body = bodyOf(member);

  assert.ok(body.subarray(0, 10).equals(GZIP_HEADER));
  assert.equal(member.chunks[0], GZIP_HEADER);
  assert.equal(member.chunks.length, pieces.length + 3);
  assert.ok(body.subarray(-10, -8).equals(FINAL_EMPTY_BLOCK));
  assert.equal(body.readUInt32LE(body.length - 8), crc32(expected));
  assert.equal(body.readUInt32LE(body.length - 4), expected.length);
  assert.equal(member.crc, crc32(expected));
  assert.equal(member.rawLength, expected.length);
  // Exactly one member: the deflate data inflates to everything and nothing follows the trailer.
  assert.ok(inflateRawSync(body.subarray(10, -8)).equals(expected));

  assert.ok(gunzipSync(body).equals(expected));
  assert.ok((await gunzipStreaming(member, 1024)).equals(expected));
});

test('curl --compressed decodes the member served over HTTP', async () => {
  const raws = Array.from({ length: 25 }, (_, i) => eventJson(100 + i, 300));
  const member = joinAll(raws.map((raw) => compressPiece(raw))).build();
  assert.ok((await curlDecoded(member)).equals(Buffer.concat(raws)));
});

test('replacing one piece changes only that piece and the trailer, and the output only there', () => {
  const raws = Array.from({ length: 30 }, (_, i) => eventJson(i, 100));
  const joiner = joinAll(raws.map((raw) => compressPiece(raw)));
  const before = joiner.build();
  assert.equal(joiner.build(), before, 'an unchanged joiner hands back the cached member');

  const index = 17;
  const replacement = eventJson(999, 140);
  joiner.replace(index, compressPiece(replacement));
  const after = joiner.build();
  assert.notEqual(after, before);
  for (let i = 0; i < after.chunks.length - 1; i++) {
    if (i === index + 1) continue;
    assert.equal(after.chunks[i], before.chunks[i], `chunk ${i} is the very same Buffer`);
  }
  assert.notEqual(after.chunks[index + 1], before.chunks[index + 1]);

  const oldText = gunzipSync(bodyOf(before));
  const newText = gunzipSync(bodyOf(after));
  const start = Buffer.concat(raws.slice(0, index)).length;
  assert.ok(newText.subarray(0, start).equals(oldText.subarray(0, start)));
  assert.ok(newText.subarray(start, start + replacement.length).equals(replacement));
  assert.ok(newText.subarray(start + replacement.length).equals(oldText.subarray(start + raws[index].length)));
  raws[index] = replacement;
  assert.ok(newText.equals(Buffer.concat(raws)));
});

test('any sequence of inserts, replaces and removes keeps CRC, ISIZE and content right', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 300 }), stored: fc.boolean() }),
    fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 300 }), stored: fc.boolean() }),
    fc.record({ kind: fc.constant('remove' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ kind: fc.constant('build' as const) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const joiner = new GzipJoiner();
      const model: Uint8Array[] = [];
      for (const o of ops) {
        if (o.kind === 'build') {
          joiner.build();
        } else if (o.kind === 'insert') {
          const at = o.at % (model.length + 1);
          joiner.insert(at, o.stored ? storedBlock(o.bytes) : compressPiece(o.bytes));
          model.splice(at, 0, o.bytes);
        } else if (model.length > 0 && o.kind === 'replace') {
          const at = o.at % model.length;
          joiner.replace(at, o.stored ? storedBlock(o.bytes) : compressPiece(o.bytes));
          model[at] = o.bytes;
        } else if (model.length > 0 && o.kind === 'remove') {
          const at = o.at % model.length;
          const count = Math.min(o.count, model.length - at);
          joiner.remove(at, count);
          model.splice(at, count);
        }
      }
      const member = joiner.build();
      const expected = Buffer.concat(model);
      const body = bodyOf(member);
      assert.equal(joiner.size, model.length);
      assert.equal(body.readUInt32LE(body.length - 8), crc32(expected));
      assert.equal(body.readUInt32LE(body.length - 4), expected.length);
      assert.ok(gunzipSync(body).equals(expected));
    }),
    { numRuns: 150 },
  );
});

test('an empty joiner is a valid gzip of nothing, and bad indexes are named errors', () => {
  const joiner = new GzipJoiner();
  const member = joiner.build();
  assert.equal(member.byteLength, 20);
  assert.equal(gunzipSync(bodyOf(member)).length, 0);
  const isIndexError = (e: unknown) => e instanceof SnapshotGzipError && e.code === 'invalid_index';
  assert.throws(() => joiner.replace(0, storedBlock(Buffer.from('x'))), isIndexError);
  assert.throws(() => joiner.remove(0), isIndexError);
  assert.throws(() => joiner.insert(1, storedBlock(Buffer.from('x'))), isIndexError);
  joiner.push(storedBlock(Buffer.from('ab')));
  assert.throws(() => joiner.remove(0, 2), isIndexError);
  assert.throws(() => joiner.at(1), isIndexError);
  assert.throws(() => joiner.insert(-1, storedBlock(Buffer.from('x'))), isIndexError);
});

test('a large member (2,000 pieces, ~50 MB raw) decodes with gunzipSync, streaming gunzip and curl', async () => {
  const raws: Buffer[] = [];
  const joiner = new GzipJoiner();
  for (let i = 0; i < 2000; i++) {
    const raw = eventJson(i, 190 + (i % 20));
    raws.push(raw);
    joiner.push(compressPiece(raw));
  }
  const expected = Buffer.concat(raws);
  assert.ok(expected.length > 50e6, `raw size ${expected.length}`);
  const member = joiner.build();
  assert.equal(member.crc, crc32(expected));
  assert.equal(member.rawLength, expected.length);
  assert.ok(gunzipSync(bodyOf(member)).equals(expected));
  assert.ok((await gunzipStreaming(member)).equals(expected));
  assert.ok((await curlDecoded(member)).equals(expected));
});

test('past 4 GiB of content ISIZE wraps mod 2^32 and the CRC still verifies', async () => {
  const zeros = Buffer.alloc(1 << 20);
  const zeroPiece = compressPiece(zeros);
  const head = Buffer.from('{"head":true}');
  const joiner = new GzipJoiner();
  joiner.push(compressPiece(head));
  const repeats = 4097; // 4097 MiB + the head: just past 2^32 bytes
  for (let i = 0; i < repeats; i++) joiner.push(zeroPiece);
  const member = joiner.build();
  const rawLength = head.length + repeats * zeros.length;
  assert.ok(rawLength > 2 ** 32);
  assert.equal(member.rawLength, rawLength);
  let expectedCrc = crc32(head);
  for (let i = 0; i < repeats; i++) expectedCrc = crc32(zeros, expectedCrc);
  assert.equal(member.crc, expectedCrc);
  const trailer = member.chunks[member.chunks.length - 1];
  assert.equal(trailer.readUInt32LE(0), expectedCrc);
  assert.equal(trailer.readUInt32LE(4), rawLength % 2 ** 32);

  // zlib checks CRC and ISIZE itself at the end of the member: a wrong trailer is an error here.
  let total = 0;
  const gunzip = createGunzip({ chunkSize: 1 << 20 });
  gunzip.on('data', (chunk: Buffer) => {
    total += chunk.length;
  });
  await new Promise<void>((resolve, reject) => {
    gunzip.on('end', resolve);
    gunzip.on('error', reject);
    Readable.from(member.chunks).pipe(gunzip);
  });
  assert.equal(total, rawLength);
});
