// Growable typed-array columns: capacity doubles so appends are amortized O(1) and a
// column is always one contiguous typed array the hot loops can index directly.

export type NumericArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array;

type Constructor<T> = { new (length: number): T };

/**
 * A copy of `column` with room for at least `minLength` entries (doubling, or exactly
 * `minLength` when `exact`, for a size known up front); new entries hold `fill`.
 */
export function grown<T extends NumericArray>(column: T, minLength: number, fill = 0, exact = false): T {
  if (column.length >= minLength) return column;
  let length = exact ? minLength : Math.max(8, column.length);
  while (length < minLength) length *= 2;
  const next = new (column.constructor as Constructor<T>)(length);
  next.set(column as never);
  if (fill !== 0) next.fill(fill, column.length);
  return next;
}

/** A new column of `length` entries, all `fill`. */
export function column<T extends NumericArray>(kind: Constructor<T>, length: number, fill = 0): T {
  const created = new kind(length);
  if (fill !== 0) created.fill(fill);
  return created;
}
