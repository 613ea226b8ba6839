// Growable typed-array columns: capacity doubles so appends are amortized O(1) and a
// column is always one contiguous typed array the hot loops can index directly. Every
// typed array in engine/ that grows (the board's columns, the indexes, the signal tables)
// grows through grown(), so the policy lives in one place.

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
 * How a column reaches `minLength`: 'double' doubles its length (from at least 8) until it
 * fits, for appends; 'exact' allocates exactly `minLength`, for a caller that computed the
 * capacity itself (a size known up front, or columns kept in proportion to another).
 */
export type Growth = 'double' | 'exact';

/**
 * `column` itself when it already holds `minLength` entries, else a copy of the same
 * element type with room for at least `minLength` entries whose new entries hold `fill`.
 */
export function grown<T extends NumericArray>(column: T, minLength: number, fill = 0, growth: Growth = 'double'): T {
  if (column.length >= minLength) return column;
  let length = growth === 'exact' ? minLength : Math.max(8, column.length);
  while (length < minLength) length *= 2;
  const next = new (column.constructor as Constructor<T>)(length);
  next.set(column as never);
  if (fill !== 0) next.fill(fill, column.length);
  return next;
}
