// docs/operations.md's settings table is the one service/config.ts's SETTINGS writes
// (`npm run docs:settings`), and every environment variable the service's code reads is
// one of those settings, or a variable of another program documented where named below:
// so a setting added to the code without its documentation fails here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { SETTINGS } from '../../service/config.ts';
import { OPERATIONS_DOC, withCurrentTable } from '../../service/settingsDoc.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The folders of the service's code (bench/, test/ and fixtures/harness/, which tests and benches share, read their own BENCH_* and test variables). */
const CODE_DIRS = ['engine', 'http', 'ingest', 'persistence', 'service', 'feeds', 'client', 'web', 'fixtures', 'alerts', 'mcp'];
const NOT_SERVICE_CODE = join('fixtures', 'harness');

/** Variables read by code that are not `npm start` settings, and the document that explains each. */
const DOCUMENTED_ELSEWHERE: Record<string, string> = {
  INGEST_URL: 'docs/feeds.md', // npm run feed
  INGEST_RETRY_MAX: 'docs/feeds.md', // npm run feed
  INGEST_TOKEN_FILE: 'docs/feeds.md', // npm run feed
  ODDS_API_KEY_FILE: 'docs/feeds.md', // npm run feed
  METRICS_PORT: 'docs/operations.md', // retired: a start that sets it says so
  METRICS_HOST: 'docs/operations.md',
  MCP_API_URL: 'docs/mcp.md', // npm run mcp: the service the stdio server reads
  MCP_API_KEY: 'docs/mcp.md', // npm run mcp: the key it reads that service with
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!path.endsWith(NOT_SERVICE_CODE)) out.push(...sourceFiles(path));
    }
    else if (/\.(ts|mts|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

/** NAME in process.env.NAME, env.NAME, env['NAME'], and (env, 'NAME') helper calls. */
function variablesRead(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])|\(\s*env\s*,\s*['"]([A-Z][A-Z0-9_]+)['"]/g)) {
    names.push((match[1] ?? match[2] ?? match[3])!);
  }
  return names;
}

describe('the settings documentation', () => {
  it("docs/operations.md's settings table is the one service/config.ts writes (npm run docs:settings)", () => {
    const doc = readFileSync(OPERATIONS_DOC, 'utf8');
    assert.equal(doc, withCurrentTable(doc), 'run `npm run docs:settings` and commit docs/operations.md');
    for (const s of SETTINGS) assert.ok(doc.includes(`| \`${s.name}\` |`), `${s.name} is not in the table`);
  });

  it('every environment variable the code reads is a setting, or is documented where it belongs', () => {
    const settings = new Set(SETTINGS.map((s) => s.name));
    const feedSettings = readFileSync(join(ROOT, 'feeds', 'feedSettings.ts'), 'utf8');
    const problems: string[] = [];
    for (const dir of CODE_DIRS) {
      for (const file of sourceFiles(join(ROOT, dir))) {
        for (const name of variablesRead(readFileSync(file, 'utf8'))) {
          if (settings.has(name)) continue;
          const where = DOCUMENTED_ELSEWHERE[name];
          if (where === undefined) {
            problems.push(`${relative(ROOT, file)} reads ${name}: neither a setting of service/config.ts nor documented`);
            continue;
          }
          if (!readFileSync(join(ROOT, where), 'utf8').includes(name)) problems.push(`${name} is not explained in ${where}`);
        }
      }
    }
    // the feed's variables are read through its settings table: each is a setting or in docs/feeds.md
    const feeds = readFileSync(join(ROOT, 'docs', 'feeds.md'), 'utf8');
    for (const match of feedSettings.matchAll(/env: '([A-Z][A-Z0-9_]+)'/g)) {
      if (!settings.has(match[1]!) && !feeds.includes(match[1]!)) problems.push(`feeds/feedSettings.ts: ${match[1]} is not in docs/feeds.md`);
    }
    assert.deepEqual(problems, []);
  });
});
