// API keys: creation shows the plain key once and stores only its SHA-256;
// lookup, list, revoke by id / last4 / hash prefix, and revocation that takes effect
// at once, whether done in this process or by another connection (the CLI).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { ApiKeys, hashKey } from '../../persistence/apiKeys.ts';
import { openDatabase, type Db } from '../../persistence/database.ts';
import { runKeysCli } from '../../persistence/keysCli.ts';
import { PLANS } from '../../persistence/plans.ts';
import { tempDbPath } from '../../fixtures/harness/persistence-fixture.ts';

const tmp = tempDbPath();
after(() => tmp.cleanup());

describe('ApiKeys', () => {
  const db: Db = openDatabase(tmp.path);
  const keys = new ApiKeys(db);
  after(() => db.close());

  it('create returns ok_ + 32 base64url characters once and stores only the hash', () => {
    const { key, record } = keys.create({ plan: 'pro', label: 'desk', now: 1_700_000_000_000 });
    assert.match(key, /^ok_[A-Za-z0-9_-]{32}$/);
    assert.equal(record.keyHash, hashKey(key));
    assert.match(record.keyHash, /^[0-9a-f]{64}$/);
    assert.equal(record.plan, 'PRO');
    assert.equal(record.monthlyCap, PLANS.PRO.monthlyCap);
    assert.equal(record.rateLimitPerMinute, PLANS.PRO.rateLimitPerMinute);
    assert.equal(record.last4, key.slice(-4));
    assert.equal(record.label, 'desk');
    assert.equal(record.createdAt, 1_700_000_000_000);
    assert.equal(record.revokedAt, null);
    const stored = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
    assert.ok(!stored.includes(key.slice(3)), 'the plain key is not in the table');
    assert.ok(stored.includes(hashKey(key)));
    assert.notEqual(keys.create({ plan: 'PRO' }).key, key);
  });

  it('refuses an unknown plan', () => {
    assert.throws(() => keys.create({ plan: 'GOLD' }), { code: 'invalid_plan' });
  });

  it('lookup finds a valid key, and null for unknown keys (also when asked twice)', () => {
    const { key, record } = keys.create({ plan: 'FREE' });
    assert.deepEqual(keys.lookup(key), record);
    assert.deepEqual(keys.lookup(key), record);
    assert.equal(keys.lookup('ok_' + 'x'.repeat(32)), null);
    assert.equal(keys.lookup('ok_' + 'x'.repeat(32)), null);
  });

  it('list shows every key without plain keys', () => {
    const list = keys.list();
    assert.ok(list.length >= 3);
    assert.deepEqual(list.map((r) => r.id), [...list.map((r) => r.id)].sort((a, b) => a - b));
    for (const r of list) assert.ok(!('key' in r));
  });

  it('revoke by last4, id and hash prefix; a revoked key is refused at once, even after a cached lookup', () => {
    for (const how of ['last4', 'id', 'hash'] as const) {
      const { key, record } = keys.create({ plan: 'FREE', label: how });
      assert.ok(keys.lookup(key), 'looked up (and cached) before revocation');
      const ref = how === 'last4' ? record.last4 : how === 'id' ? String(record.id) : record.keyHash.slice(0, 12);
      const revoked = keys.revoke(ref, 1_800_000_000_000);
      assert.equal(revoked.alreadyRevoked, false);
      assert.equal(revoked.record.id, record.id);
      assert.equal(revoked.record.revokedAt, 1_800_000_000_000);
      assert.equal(keys.lookup(key), null, `revoked by ${how}`);
    }
  });

  it('revoking twice keeps the first revocation time; unknown refs are key_not_found', () => {
    const { record } = keys.create({ plan: 'FREE' });
    keys.revoke(String(record.id), 1000);
    const again = keys.revoke(String(record.id), 2000);
    assert.equal(again.alreadyRevoked, true);
    assert.equal(again.record.revokedAt, 1000);
    assert.throws(() => keys.revoke('999999'), { code: 'key_not_found' });
    assert.throws(() => keys.revoke('0123456789abcdef0123'), { code: 'key_not_found' });
  });

  it('a reference matching several valid keys is ambiguous; only valid ones count', () => {
    const a = keys.create({ plan: 'FREE' }).record;
    const b = keys.create({ plan: 'FREE' }).record;
    // Give both the same last4 (a 1 in 16.7M coincidence otherwise).
    db.prepare("UPDATE api_keys SET last4 = 'ZZZZ' WHERE id IN (?, ?)").run(a.id, b.id);
    assert.throws(() => keys.revoke('ZZZZ'), { code: 'ambiguous_key' });
    keys.revoke(String(a.id));
    assert.equal(keys.revoke('ZZZZ').record.id, b.id, 'the one still valid is meant');
  });

  it('a revocation committed by another connection (the CLI) is refused on the next lookup', () => {
    const { key, record } = keys.create({ plan: 'ENTERPRISE' });
    assert.ok(keys.lookup(key));
    const other = openDatabase(tmp.path);
    new ApiKeys(other).revoke(record.last4);
    other.close();
    assert.equal(keys.lookup(key), null);
  });

  it('a key created by another connection is found even after a cached miss', () => {
    const other = openDatabase(tmp.path);
    const { key } = new ApiKeys(other).create({ plan: 'FREE' });
    other.close();
    assert.ok(keys.lookup(key));
  });
});

describe('keys CLI', () => {
  const env = { DB_PATH: tmp.path };
  const run = (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = runKeysCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) }, Date.parse('2026-11-21T12:00:00Z'));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('create prints the key once; list shows it by last4; revoke takes it out', () => {
    const created = run('create', '--plan', 'PRO', '--label', 'me');
    assert.equal(created.code, 0);
    const key = created.out.match(/ok_[A-Za-z0-9_-]{32}/)![0];
    const listed = run('list');
    assert.equal(listed.code, 0);
    assert.ok(!listed.out.includes(key));
    assert.match(listed.out, new RegExp(`ok_…${key.slice(-4).replace(/[-]/g, '\\-')}\\s+PRO\\s+600\\s+1000000`));
    const db = openDatabase(tmp.path);
    const keys = new ApiKeys(db);
    assert.ok(keys.lookup(key));
    const id = keys.list().find((r) => r.keyHash === hashKey(key))!.id;
    const revoked = run('revoke', String(id));
    assert.equal(revoked.code, 0);
    assert.match(revoked.out, new RegExp(`revoked key #${id}`));
    assert.equal(keys.lookup(key), null);
    assert.match(run('revoke', String(id)).out, /already revoked/);
    db.close();
  });

  it('reports usage errors with exit code 2 and unknown keys with 1', () => {
    assert.equal(run().code, 2);
    assert.equal(run('bogus').code, 2);
    assert.equal(run('create').code, 2);
    const missing = run('revoke', '424242');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /key_not_found/);
    assert.match(run('create', '--plan=GOLD').err, /invalid_plan/);
  });

  it('runs as `npm run keys` does (tsx persistence/keysCli.ts), honouring DB_PATH', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'persistence/keysCli.ts', 'create', '--plan', 'FREE', '--label', 'spawned'], {
      env: { ...process.env, DB_PATH: tmp.path },
      encoding: 'utf8',
    });
    const key = out.match(/ok_[A-Za-z0-9_-]{32}/)![0];
    const db = openDatabase(tmp.path);
    const record = new ApiKeys(db).lookup(key);
    db.close();
    assert.equal(record?.label, 'spawned');
  });
});
