// Keys and usage across processes and restarts: the keys CLI run as
// its own process against the server's database file (a key it creates works at once,
// a key it revokes is refused at once), usage counts surviving an app restart on the
// same file, and npm start's first-run load / later reuse of the cold data.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hashKey } from '../../persistence/apiKeys.ts';
import { openDatabase } from '../../persistence/database.ts';
import { startTestApp, NOW, testBoard, type TestApp } from '../helpers/app.ts';
import type { Json } from '../helpers/catalog-helpers.ts';

const run = promisify(execFile);
const USAGE = '/api/v1/account/usage';
const EVENTS = '/api/v1/events';

/** `npm run keys -- <args>` without npm's own start-up: the same script, as its own process. */
async function keysCli(dbPath: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'persistence/keysCli.ts', ...args], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, DB_PATH: dbPath },
  });
  return stdout;
}

async function usage(t: TestApp, key: string): Promise<Json> {
  const { reply, body } = await t.call(USAGE, USAGE, { headers: { 'X-Api-Key': key } });
  assert.equal(reply.status, 200);
  return body.data[0];
}

describe('keys across processes and restarts', () => {
  let dir: string;
  let dbPath: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'odds-keys-'));
    dbPath = join(dir, 'odds.db');
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('the CLI creates a key the running server accepts at once, and revokes it: refused at once', async () => {
    const t = await startTestApp({ dbPath });
    try {
      const created = await keysCli(dbPath, 'create', '--plan', 'PRO', '--label', 'cli test');
      // Lookarounds, not \b: a key may end in '-', and '-' before a newline is no word boundary.
      const key = /(?<![A-Za-z0-9_-])(ok_[A-Za-z0-9_-]{32})(?![A-Za-z0-9_-])/.exec(created)?.[1];
      assert.ok(key, created);
      const accepted = await t.call(EVENTS, EVENTS, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(accepted.reply.status, 200);
      assert.equal(accepted.reply.headers['x-ratelimit-limit'], '600');
      assert.equal((await usage(t, key)).plan, 'PRO');

      const listed = await keysCli(dbPath, 'list');
      assert.match(listed, new RegExp(`ok_…${key.slice(-4)}\\s+PRO`));
      assert.ok(!listed.includes(key), 'the plain key is never shown again');

      const revoked = await keysCli(dbPath, 'revoke', key.slice(-4));
      assert.match(revoked, /revoked key #\d+/);
      const refused = await t.call(EVENTS, EVENTS, { headers: { 'X-Api-Key': key } });
      assert.equal(refused.reply.status, 401);
      assert.equal(refused.body.code, 'invalid_api_key');
      assert.equal((await usage(t, key)).plan, 'ENTERPRISE', '/account/usage answers the anonymous plan for a revoked key');
      assert.deepEqual(t.logs, []);
    } finally {
      await t.close();
    }
  });

  it('usage counts survive a restart on the same file; the cold data is loaded once and reused', async () => {
    const board = testBoard();
    const first = await startTestApp({ dbPath, board });
    let key: string;
    const team = board.teams[0]!;
    try {
      const meta = first.app.persistence.db.prepare("SELECT value FROM meta WHERE key = 'cold_board'").pluck().get();
      assert.equal(meta, `42:small:${new Date(NOW).toISOString().slice(0, 10)}`, 'loaded from the fixture board on first run');
      key = first.app.persistence.apiKeys.create({ plan: 'FREE', now: first.clock.now() }).key;
      for (let i = 0; i < 7; i++) assert.equal((await first.call(EVENTS, EVENTS, { headers: { 'X-Api-Key': key } })).reply.status, 200);
      assert.equal((await usage(first, key)).monthlyUsed, 7, 'counted in memory before any flush');
    } finally {
      await first.close();
    }

    // Prove reuse: a change made to the file between runs must still be there after the restart.
    const db = openDatabase(dbPath);
    db.prepare('UPDATE teams SET name = ? WHERE id = ?').run('Renamed Between Runs', team.id);
    assert.equal(db.prepare('SELECT count FROM api_usage WHERE key_hash = ?').pluck().get(hashKey(key!)), 7, 'close() flushed the counts');
    db.close();

    const second = await startTestApp({ dbPath, board });
    try {
      assert.equal((await usage(second, key)).monthlyUsed, 7, 'the month count survived the restart');
      for (let i = 0; i < 3; i++) await second.call(EVENTS, EVENTS, { headers: { 'X-Api-Key': key } });
      const after = await usage(second, key);
      assert.equal(after.monthlyUsed, 10);
      const teamReply = await second.call('/api/v1/teams/:teamId', `/api/v1/teams/${team.id}`);
      assert.equal(teamReply.body.data[0].name, 'Renamed Between Runs', 'the cold data was reused, not reloaded');
      assert.deepEqual(second.logs, []);
    } finally {
      await second.close();
    }
  });
});
