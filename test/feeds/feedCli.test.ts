// `npm run feed`'s safety, run in process (feeds/cliMain.ts) against a real durable
// server: no default ingest target (explicit, or the server of DATA_DIR through the
// address it wrote), the token from INGEST_TOKEN or a file and never from argv, errors
// that name the real problem, --help that documents every option, and the sample file
// in the repository replaying onto the board.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runFeedCli } from '../../feeds/cliMain.ts';
import { NDJSON_FLAGS, ODDS_API_SETTINGS, THE_ODDS_API_FLAGS } from '../../feeds/feedSettings.ts';
import { INGEST_ADDRESS_FILE } from '../../ingest/ingestAddress.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { STUB_API_KEY, StubProvider, providerEventsFrom } from '../../fixtures/harness/stubProvider.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { NOW } from '../../fixtures/harness/now.ts';

const SAMPLE = 'feeds/samples/sample-replay.ndjson';
const SAMPLE_EVENT = 'sample-nba-20270115-hbr-mtn';

let app: TestApp;
let dataDir: string;
let scratch: string;

before(async () => {
  app = await startTestApp({ dataDir: true });
  // the token was generated into DATA_DIR/ingest-token (no INGEST_TOKEN in the app's env)
  dataDir = dirname(app.app.durable!.token.file!);
  scratch = mkdtempSync(join(tmpdir(), 'feed-cli-'));
});
after(async () => {
  await app.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; err: string; out: string }> {
  let err = '';
  let out = '';
  const code = await runFeedCli(args, env, { write: (t) => void (err += t), out: (t) => void (out += t), tty: false });
  return { code, err, out };
}

const rows = async (eventId: string) => (await app.call('/api/v1/odds', `/api/v1/odds?event_id=${eventId}&limit=100`)).body.data as any[];

test('--help documents every option of both modes, with its variable', async () => {
  const { code, out } = await cli(['--help']);
  assert.equal(code, 0);
  for (const flag of new Set([...THE_ODDS_API_FLAGS, ...NDJSON_FLAGS])) assert.match(out, new RegExp(`--${flag}\\b`), `--${flag} in --help`);
  for (const setting of Object.values(ODDS_API_SETTINGS)) if (setting.env !== 'ODDS_API_KEY') assert.ok(out.includes(setting.env), `${setting.env} in --help`);
  for (const env of ['INGEST_URL', 'DATA_DIR', 'INGEST_TOKEN_FILE', 'ODDS_API_KEY_FILE', 'INGEST_RETRY_MAX']) assert.ok(out.includes(env), `${env} in --help`);
  assert.deepEqual((await cli(['ndjson', '--help'])).out, out, 'the same help after a mode');
});

test('without --ingest, INGEST_URL or DATA_DIR there is no target: nothing is sent anywhere', async () => {
  const { code, err } = await cli(['ndjson', SAMPLE], { INGEST_TOKEN: 'x' });
  assert.equal(code, 2);
  assert.match(err, /^feed: no ingest target: give --ingest URL \(or INGEST_URL\), or --data-dir DIR \(or DATA_DIR\) of the running server/);
  assert.equal((await rows(SAMPLE_EVENT)).length, 0);
});

test('a token or API key on the command line is refused before anything runs, and says what to use instead', async () => {
  for (const args of [['ndjson', SAMPLE, '--token', 'secret'], ['ndjson', SAMPLE, '--token=secret'], ['the-odds-api', '--api-key', 'k']]) {
    const { code, err } = await cli([...args, '--data-dir', dataDir]);
    assert.equal(code, 2, args.join(' '));
    assert.match(err, /is not accepted: a secret on the command line shows in ps .* npm echoes the command; set (INGEST_TOKEN|ODDS_API_KEY)/);
    assert.ok(!err.includes('secret\n') && !err.includes('=secret'), 'the secret is not repeated');
  }
  assert.equal((await rows(SAMPLE_EVENT)).length, 0);
});

test('errors name the real problem: a data dir with no server, a token file that is not there, a refused token', async () => {
  const empty = join(scratch, 'no-server');
  rmSync(empty, { recursive: true, force: true });
  writeFileSync(join(scratch, 'placeholder'), '');
  let r = await cli(['ndjson', SAMPLE], { DATA_DIR: scratch, INGEST_TOKEN: 'x' });
  assert.equal(r.code, 2);
  assert.match(r.err, new RegExp(`DATA_DIR=${scratch} has no ${INGEST_ADDRESS_FILE}: no server is taking batches on that data dir`));
  r = await cli(['ndjson', SAMPLE, '--data-dir', dataDir, '--token-file', join(scratch, 'missing-token')]);
  assert.equal(r.code, 2);
  assert.match(r.err, /cannot read --token-file .*missing-token: no such file/);
  r = await cli(['ndjson', join(scratch, 'nothing.ndjson'), '--data-dir', dataDir]);
  assert.match(r.err, /no such file: .*nothing\.ndjson/);
  // the server's address from its DATA_DIR, a token that is not its own
  r = await cli(['ndjson', SAMPLE, '--data-dir', dataDir], { INGEST_TOKEN: 'not-the-token' });
  assert.equal(r.code, 1);
  assert.match(r.err, /feed: the ingest listener refused the token from INGEST_TOKEN \(.*401 invalid_token.*\); nothing from line 1 on was taken; resume with --from-line 1/);
  assert.doesNotMatch(r.err, /fix them/);
  assert.equal((await rows(SAMPLE_EVENT)).length, 0, 'nothing applied');
});

test('the sample file in the repository replays onto the server of DATA_DIR (its address and token from the data dir)', async () => {
  assert.ok(existsSync(join(dataDir, INGEST_ADDRESS_FILE)), 'the server wrote its ingest address');
  const r = await cli(['ndjson', SAMPLE, '--batch', '7'], { DATA_DIR: dataDir });
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /ndjson: done, 20 changes in 3 batches \(last line 20\) to http:\/\/127\.0\.0\.1:\d+/);
  const served = await rows(SAMPLE_EVENT);
  assert.equal(served.length, 11, 'twelve rows, one removed');
  assert.equal(served.find((row) => row.id === `${SAMPLE_EVENT}:samplebook:MONEYLINE:FULL-HOME`)?.priceAmerican, -150, 'the tick');
  assert.ok(!served.some((row) => row.id === `${SAMPLE_EVENT}:samplesharp:TOTAL:FULL-UNDER-221.5`), 'the remove');
  assert.ok(served.every((row) => row.eventStartTime === '2027-01-15T00:30'), 'the rows carry the event start');
});

test('the-odds-api with a token file and the server of DATA_DIR; a refused token stops it, naming where the token came from', async () => {
  const stub = new StubProvider();
  const events = providerEventsFrom(generateBoard({ seed: 42, size: 'small', now: NOW }), 'nba', 1, 'clitoken');
  for (const e of events) e.commence_time = new Date(Date.now() + 86_400_000).toISOString();
  stub.addSport('basketball_nba', events);
  await stub.start();
  try {
    const tokenFile = join(scratch, 'wrong-token');
    writeFileSync(tokenFile, 'wrong\n', { mode: 0o600 });
    const keyFile = join(scratch, 'api-key');
    writeFileSync(keyFile, `${STUB_API_KEY}\n`, { mode: 0o600 });
    const r = await cli(['the-odds-api', '--base-url', stub.url, '--sports', 'basketball_nba', '--interval', '0.2', '--api-key-file', keyFile, '--token-file', tokenFile, '--data-dir', dataDir]);
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`refused the token from --token-file ${tokenFile}: .*It is not that server's token`));
    assert.match(r.err, /submitting to http:\/\/127\.0\.0\.1:\d+ \(from .*ingest-address, token from --token-file/);
    assert.ok(stub.requests.length > 0, 'the provider was polled with the key from the file');
  } finally {
    await stub.close();
  }
});
