// What the admin API accepts as a subscription (create: all required fields; update:
// any of them), checked field by field: a refusal names the field and what it allows.
import { FilterError, parseFilters, type AlertFilter } from './filters.ts';

export interface SubscriptionInput {
  url?: string;
  secret?: string;
  filters?: AlertFilter[];
  batchWindowMs?: number;
  maxBatchEvents?: number;
  description?: string | null;
  enabled?: boolean;
}

export class InputError extends Error {
  constructor(
    readonly field: string,
    detail: string,
    readonly validValues?: readonly string[],
  ) {
    super(detail);
  }
}

const FIELDS = ['url', 'secret', 'filters', 'batchWindowMs', 'maxBatchEvents', 'description', 'enabled'];
export const MAX_BATCH_WINDOW_MS = 60_000;
export const MAX_BATCH_EVENTS = 1000;

function integer(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new InputError(field, `${field} must be an integer from ${min} to ${max}`);
  return value;
}

/** Parses a JSON body; `create` requires url and filters. */
export function parseSubscriptionInput(body: Buffer | undefined, create: boolean): SubscriptionInput {
  let raw: unknown;
  try {
    raw = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    throw new InputError('body', 'the body must be a JSON object');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InputError('body', 'the body must be a JSON object');
  const o = raw as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!FIELDS.includes(key)) throw new InputError(key, `unknown field ${key}; a subscription has ${FIELDS.join(', ')}`, FIELDS);
  const out: SubscriptionInput = {};
  if (o.url !== undefined) {
    let url: URL | null = null;
    try {
      url = typeof o.url === 'string' && o.url.length <= 2048 ? new URL(o.url) : null;
    } catch {
      url = null;
    }
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
      throw new InputError('url', 'url must be an absolute http:// or https:// URL without credentials, at most 2048 characters');
    }
    out.url = url.toString();
  } else if (create) throw new InputError('url', 'url is required');
  if (o.secret !== undefined) {
    if (typeof o.secret !== 'string' || o.secret.length < 16 || o.secret.length > 256) throw new InputError('secret', 'secret must be a string of 16 to 256 characters (omit it on create to have one generated)');
    out.secret = o.secret;
  }
  if (o.filters !== undefined) {
    try {
      out.filters = parseFilters(o.filters);
    } catch (error) {
      if (error instanceof FilterError) throw new InputError(error.field, error.message, error.validValues);
      throw error;
    }
  } else if (create) throw new InputError('filters', 'filters is required: an array of filters');
  if (o.batchWindowMs !== undefined) out.batchWindowMs = integer(o.batchWindowMs, 'batchWindowMs', 0, MAX_BATCH_WINDOW_MS);
  if (o.maxBatchEvents !== undefined) out.maxBatchEvents = integer(o.maxBatchEvents, 'maxBatchEvents', 1, MAX_BATCH_EVENTS);
  if (o.description !== undefined) {
    if (o.description !== null && (typeof o.description !== 'string' || o.description.length > 500)) throw new InputError('description', 'description must be a string of at most 500 characters, or null');
    out.description = o.description as string | null;
  }
  if (o.enabled !== undefined) {
    if (typeof o.enabled !== 'boolean') throw new InputError('enabled', 'enabled must be true or false');
    out.enabled = o.enabled;
  }
  return out;
}
