// Every operation of the OpenAPI document (the reference /docs renders) says its rules
// and ends with a runnable curl example: each description's sh block is run here with
// sh against the real service started with REQUIRE_KEY=1 (so a key-designated route
// whose example forgot the key header fails), with http://localhost:8080 pointed at the
// test server and API_KEY set to a real key. curl runs with --fail-with-body, so any
// 4xx/5xx answer, including a 404 from an id lookup that found nothing, fails the block.
// A stream's example ends by its own --max-time (curl exit 28), which counts as success.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';

interface Operation {
  description?: string;
  'x-auth-designation': 'key' | 'none';
}

/** Runs in the shell before each block: curl fails on HTTP errors; a --max-time end is a stream's normal end. */
const PRELUDE = `set -e
curl() { rc=0; command curl --fail-with-body "$@" || rc=$?; if [ "$rc" = 28 ]; then rc=0; fi; return $rc; }
`;

function shellBlock(description: string): string | null {
  const match = /```sh\n([\s\S]*?)\n```/.exec(description);
  return match === null ? null : match[1]!;
}

function run(script: string, env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', PRELUDE + script], { env: { ...process.env, ...env }, cwd, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe('curl examples of the API reference', () => {
  let t: TestApp;
  let dir: string;
  before(async () => {
    // durable with a tick archive, on today's date: the history examples (a day's export
    // named by `date -u`) read what the write path archived
    dir = mkdtempSync(join(tmpdir(), 'odds-curl-'));
    t = await startTestApp({ env: { REQUIRE_KEY: '1', ARCHIVE_DIR: join(dir, 'archive') }, simulatorRate: 20, dataDir: true, now: Date.now() });
    const { key } = t.app.persistence.apiKeys.create({ plan: 'ENTERPRISE', label: 'archive seed', now: t.clock.now() });
    const odds = JSON.parse((await t.request('/api/v1/odds?league=nfl&limit=2', { headers: { 'X-Api-Key': key } })).body.toString()) as { data: { id: string; priceAmerican: number | null }[] };
    await t.app.durable!.durable.ingest.submit(odds.data.map((row) => ({ op: 'price', id: row.id, priceAmerican: row.priceAmerican === 150 ? 155 : 150 })));
    await t.app.durable!.archive!.flush();
  });
  after(async () => {
    await t?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('every operation has an example that names its path, with the key header when the route is key-designated', async () => {
    const { body: doc } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, { get: Operation }>)) {
      const block = shellBlock(item.get.description ?? '');
      if (block === null) {
        problems.push(`${path}: no sh example`);
        continue;
      }
      const literal = path.split('{')[0]!;
      if (!block.includes(`http://localhost:8080${literal}`)) problems.push(`${path}: the example does not call ${literal}`);
      if (item.get['x-auth-designation'] === 'key' && !block.includes('X-Api-Key: $API_KEY')) problems.push(`${path}: key-designated, the example sends no key`);
    }
    assert.deepEqual(problems, []);
  });

  it('every example runs against the service and gets answers, not errors', async () => {
    const { key } = t.app.persistence.apiKeys.create({ plan: 'ENTERPRISE', label: 'curl examples', now: t.clock.now() });
    const { body: doc } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    const failures: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, { get: Operation }>)) {
      const block = shellBlock(item.get.description ?? '');
      if (block === null) continue;
      const script = block.replaceAll('http://localhost:8080', `http://127.0.0.1:${t.port}`);
      const result = await run(script, { API_KEY: key }, dir);
      if (result.code !== 0 || result.stdout.trim() === '') failures.push(`${path}: exit ${result.code}\n${script}\nstdout: ${result.stdout.slice(0, 400)}\nstderr: ${result.stderr.slice(0, 400)}`);
    }
    assert.deepEqual(failures, []);
  });
});
