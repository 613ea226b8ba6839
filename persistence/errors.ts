// Failures persistence/ reports to its callers, as named codes the callers can map
// (the HTTP layer to its error bodies, the keys CLI to messages).

export type PersistenceErrorCode =
  | 'invalid_limit'
  | 'invalid_status'
  | 'invalid_plan'
  | 'key_not_found'
  | 'ambiguous_key';

export class PersistenceError extends Error {
  constructor(
    readonly code: PersistenceErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PersistenceError';
  }
}

/** Page sizes are validated by the routes (1..1000); this guards the SQL. */
export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) throw new PersistenceError('invalid_limit', `limit must be a positive integer, got ${limit}`);
}
