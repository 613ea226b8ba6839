// API keys. The plain key is shown once, at creation; the database
// keeps only its SHA-256. Lookups run on every keyed request, so they are answered
// from an in-memory cache, which must never let a revoked key through:
//  - revoke() in this process updates the cache itself;
//  - a revoke (or create) by another process, the keys CLI, commits through another
//    connection, which moves SQLite's PRAGMA data_version for this one; every lookup
//    compares it (one prepared pragma, no table read) and drops the cache on a change.

import { createHash, randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';
import { PersistenceError } from './errors.ts';
import { isPlanName, PLANS, type PlanName } from './plans.ts';

export interface ApiKeyRecord {
  id: number;
  keyHash: string;
  plan: PlanName;
  monthlyCap: number;
  rateLimitPerMinute: number;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms, or null while the key is valid. */
  revokedAt: number | null;
  last4: string;
  label: string;
}

export interface CreatedKey {
  /** The plain key. It is not stored anywhere: this is the only time it exists. */
  key: string;
  record: ApiKeyRecord;
}

export const KEY_PREFIX = 'ok_';

/** 'ok_' + 32 base64url characters (24 random bytes, 192 bits). */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('base64url');
}

export function hashKey(plain: string): string {
  return createHash('sha256').update(plain).digest('hex');
}

const COLUMNS = 'id, key_hash, plan, monthly_cap, rate_limit_per_minute, created_at, revoked_at, last4, label';

type RawKey = [number, string, string, number, number, number, number | null, string, string];

function toRecord(r: RawKey): ApiKeyRecord {
  return {
    id: r[0],
    keyHash: r[1],
    plan: r[2] as PlanName,
    monthlyCap: r[3],
    rateLimitPerMinute: r[4],
    createdAt: r[5],
    revokedAt: r[6],
    last4: r[7],
    label: r[8],
  };
}

// Unknown keys are cached too (so a flood of bad keys does not reach SQLite), which
// is why the cache is bounded.
const CACHE_LIMIT = 10_000;

export class ApiKeys {
  private readonly insert: Statement;
  private readonly byHash: Statement;
  private readonly byId: Statement;
  private readonly byLast4: Statement;
  private readonly byHashPrefix: Statement;
  private readonly all: Statement;
  private readonly markRevoked: Statement;
  private readonly dataVersion: Statement;
  private readonly cache = new Map<string, ApiKeyRecord | null>();
  private seenDataVersion: number;

  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT INTO api_keys (key_hash, plan, monthly_cap, rate_limit_per_minute, created_at, revoked_at, last4, label)
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?) RETURNING ${COLUMNS}`,
    ).raw(true);
    this.byHash = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = ?`).raw(true);
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).raw(true);
    this.byLast4 = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE last4 = ?`).raw(true);
    this.byHashPrefix = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE substr(key_hash, 1, length(@prefix)) = @prefix`).raw(true);
    this.all = db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY id`).raw(true);
    this.markRevoked = db.prepare(
      `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING ${COLUMNS}`,
    ).raw(true);
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.seenDataVersion = this.dataVersion.get() as number;
  }

  create(options: { plan: string; label?: string; now?: number }): CreatedKey {
    const plan = options.plan.toUpperCase();
    if (!isPlanName(plan)) throw new PersistenceError('invalid_plan', `unknown plan '${options.plan}' (FREE, PRO or ENTERPRISE)`);
    const limits = PLANS[plan];
    const key = generateKey();
    const raw = this.insert.get(
      hashKey(key), plan, limits.monthlyCap, limits.rateLimitPerMinute, options.now ?? Date.now(), key.slice(-4), options.label ?? '',
    ) as RawKey;
    const record = toRecord(raw);
    this.cache.delete(key);
    return { key, record };
  }

  /** Every key, revoked ones included, oldest first. Never the plain keys: they are not kept. */
  list(): ApiKeyRecord[] {
    return (this.all.all() as RawKey[]).map(toRecord);
  }

  /**
   * Revokes one key named by its id, its last 4 characters, a prefix of its hash (8+ hex
   * digits) or the plain key itself. When a reference matches several keys but only one
   * of them is still valid, that one is meant. Revoking a revoked key returns it unchanged.
   */
  revoke(ref: string, now: number = Date.now()): { record: ApiKeyRecord; alreadyRevoked: boolean } {
    const target = this.resolve(ref);
    const raw = this.markRevoked.get(now, target.id) as RawKey | undefined;
    // The record may be cached under its plain key, which is not known here.
    this.cache.clear();
    return raw ? { record: toRecord(raw), alreadyRevoked: false } : { record: target, alreadyRevoked: true };
  }

  /** The valid key for a plain key, or null when it is unknown or revoked. */
  lookup(plainKey: string): ApiKeyRecord | null {
    const version = this.dataVersion.get() as number;
    if (version !== this.seenDataVersion) {
      this.seenDataVersion = version;
      this.cache.clear();
    }
    const cached = this.cache.get(plainKey);
    if (cached !== undefined) return cached;
    const raw = this.byHash.get(hashKey(plainKey)) as RawKey | undefined;
    const record = raw && raw[6] === null ? toRecord(raw) : null;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(plainKey, record);
    return record;
  }

  private resolve(ref: string): ApiKeyRecord {
    const found = new Map<number, ApiKeyRecord>();
    const add = (rows: unknown[]) => {
      for (const r of rows as RawKey[]) found.set(r[0], toRecord(r));
    };
    if (/^\d+$/.test(ref)) add(this.byId.all(Number(ref)));
    if (ref.length === 4) add(this.byLast4.all(ref));
    if (/^[0-9a-f]{8,64}$/.test(ref)) add(this.byHashPrefix.all({ prefix: ref }));
    if (ref.startsWith(KEY_PREFIX)) add(this.byHash.all(hashKey(ref)));
    const matches = [...found.values()];
    if (matches.length === 0) throw new PersistenceError('key_not_found', `no API key matches '${ref}'`);
    if (matches.length === 1) return matches[0]!;
    const valid = matches.filter((m) => m.revokedAt === null);
    if (valid.length === 1) return valid[0]!;
    const ids = matches.map((m) => `#${m.id} (…${m.last4})`).join(', ');
    throw new PersistenceError('ambiguous_key', `'${ref}' matches several API keys: ${ids}; revoke by id`);
  }
}
