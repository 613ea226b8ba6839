// Typed arrays grown by doubling (the signal tables are indexed by group or ref).

export function growInt32(from: Int32Array, capacity: number): Int32Array<ArrayBuffer> {
  const to = new Int32Array(capacity);
  to.set(from);
  return to;
}

export function growUint8(from: Uint8Array, capacity: number): Uint8Array<ArrayBuffer> {
  const to = new Uint8Array(capacity);
  to.set(from);
  return to;
}

export function growFloat64(from: Float64Array, capacity: number): Float64Array<ArrayBuffer> {
  const to = new Float64Array(capacity);
  to.set(from);
  return to;
}
