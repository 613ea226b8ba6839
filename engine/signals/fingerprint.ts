// A 53-bit fingerprint of a few numbers, built without allocating: what the signal
// stream keeps per market group and subscription instead of the records it pushed
// (engine/stream/signalTopics.ts compares the fingerprint of a group's records now with
// the one it last pushed). Two independent 32-bit MurmurHash3 lanes (different seeds),
// so two different records share a fingerprint with odds of about 2^-53.
//
//   fingerprint.begin(seed); fingerprint.int(x); fingerprint.num(y); fingerprint.end()
//
// end() is never 0 (kept for "nothing pushed yet") nor 1 (NO_RECORDS).

/** The fingerprint of "no records". */
export const NO_RECORDS = 1;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

let lane1 = 0;
let lane2 = 0;
let length = 0;

function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finalMix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export const fingerprint = {
  begin(seed: number): void {
    lane1 = mix(0x3c6ef372, seed);
    lane2 = mix(0x5be0cd19, seed ^ 0x7f4a7c15);
    length = 1;
  },
  /** A 32-bit integer (ids, counts, flags). */
  int(x: number): void {
    lane1 = mix(lane1, x);
    lane2 = mix(lane2, x ^ 0x2545f491);
    length++;
  },
  /** A double, by its bits (so -0 and 0 differ, as JSON does not: harmless, a spare push). */
  num(x: number): void {
    f64[0] = x;
    const lo = u32[0];
    const hi = u32[1];
    lane1 = mix(mix(lane1, lo), hi);
    lane2 = mix(mix(lane2, hi ^ 0x2545f491), lo);
    length += 2;
  },
  end(): number {
    const a = finalMix(lane1 ^ length) >>> 0;
    const b = finalMix(lane2 ^ Math.imul(length, 0x9e3779b1)) >>> 11;
    const v = a * 2097152 + b;
    return v < 2 ? v + 2 : v;
  },
};
