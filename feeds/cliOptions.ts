// What `npm run feed` needs before it sends anything: where the batches go and the
// token they carry, each from a place that cannot leak or surprise.
//
// Ingest target, the first of:
//   --ingest URL | INGEST_URL          an explicit origin (http://127.0.0.1:8081)
//   --data-dir DIR | DATA_DIR          the server running on that DATA_DIR: the address its
//                                      ingest listener wrote to DIR/ingest-address
// and nothing else: there is no default port, so the feed never posts to whatever
// happens to listen on one.
//
// Token, the first of:
//   --token-file PATH | INGEST_TOKEN_FILE   a file holding the token (first line)
//   INGEST_TOKEN                            the environment
//   DIR/ingest-token                        the token the server keeps in its DATA_DIR
// A token (or The Odds API key) on the command line is refused: argv shows in `ps` to
// every user of the host, and npm echoes the command it runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readIngestAddress, INGEST_ADDRESS_FILE } from '../ingest/ingestAddress.ts';
import { ODDS_API_SETTINGS } from './feedSettings.ts';

/** The token file the server keeps in DATA_DIR (ingest/token.ts TOKEN_FILE). */
const TOKEN_FILE = 'ingest-token';

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export interface IngestTarget {
  url: string;
  /** Where the url came from, for messages ('--ingest', 'INGEST_URL', '/data/ingest-address'). */
  urlFrom: string;
  token: string;
  /** Where the token came from, for messages; never the token itself. */
  tokenFrom: string;
}

/** Flags that would put a secret on the command line, and what to use instead. */
export const SECRET_FLAGS: Readonly<Record<string, string>> = {
  token: 'set INGEST_TOKEN, or pass --token-file PATH (or DATA_DIR, whose ingest-token the server wrote)',
  'api-key': 'set ODDS_API_KEY, or pass --api-key-file PATH',
};

export function refuseSecretFlags(args: readonly string[]): void {
  for (const arg of args) {
    const name = /^--([a-z-]+)(=|$)/.exec(arg)?.[1];
    if (name !== undefined && SECRET_FLAGS[name] !== undefined) {
      throw new CliError(`--${name} is not accepted: a secret on the command line shows in ps to every user of this host, and npm echoes the command; ${SECRET_FLAGS[name]}`);
    }
  }
}

function httpOrigin(text: string, from: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`${from} is not a URL: ${JSON.stringify(text)} (expected http://host:port of the ingest listener)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`${from} must be an http(s) URL of the ingest listener, got ${text}`);
  return text;
}

/** A secret read from a file: its first line, trimmed; the error names the file and what went wrong. */
export function readSecretFile(path: string, from: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw new CliError(`cannot read ${from} ${path}: ${why}`);
  }
  const secret = text.split(/\r?\n/)[0]!.trim();
  if (secret === '') throw new CliError(`${from} ${path} is empty`);
  return secret;
}

export function resolveIngestTarget(flags: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): IngestTarget {
  const dataDir = flags.get('data-dir') ?? (env.DATA_DIR || undefined);
  const dataDirFrom = flags.has('data-dir') ? '--data-dir' : 'DATA_DIR';
  let url: string;
  let urlFrom: string;
  if (flags.has('ingest')) {
    url = httpOrigin(flags.get('ingest')!, '--ingest');
    urlFrom = '--ingest';
  } else if (env.INGEST_URL) {
    url = httpOrigin(env.INGEST_URL, 'INGEST_URL');
    urlFrom = 'INGEST_URL';
  } else if (dataDir !== undefined) {
    const file = join(dataDir, INGEST_ADDRESS_FILE);
    const address = readIngestAddress(dataDir);
    if (address === null) {
      throw new CliError(
        `${dataDirFrom}=${dataDir} has no ${INGEST_ADDRESS_FILE}: no server is taking batches on that data dir (the server writes ${file} once its ingest listener takes batches, and removes it when it stops); start it, or give --ingest URL`,
      );
    }
    url = httpOrigin(address, file);
    urlFrom = file;
  } else {
    throw new CliError('no ingest target: give --ingest URL (or INGEST_URL), or --data-dir DIR (or DATA_DIR) of the running server; the feed has no default, so it never posts to whatever listens on a default port');
  }

  let token: string;
  let tokenFrom: string;
  const tokenFile = flags.get('token-file') ?? (env.INGEST_TOKEN_FILE || undefined);
  if (flags.has('token-file')) {
    token = readSecretFile(tokenFile!, '--token-file');
    tokenFrom = `--token-file ${tokenFile}`;
  } else if (env.INGEST_TOKEN !== undefined && env.INGEST_TOKEN.trim() !== '') {
    token = env.INGEST_TOKEN.trim();
    tokenFrom = 'INGEST_TOKEN';
  } else if (tokenFile !== undefined) {
    token = readSecretFile(tokenFile, 'INGEST_TOKEN_FILE');
    tokenFrom = `INGEST_TOKEN_FILE ${tokenFile}`;
  } else if (dataDir !== undefined) {
    const file = join(dataDir, TOKEN_FILE);
    token = readSecretFile(file, `the token file of ${dataDirFrom}`);
    tokenFrom = file;
  } else {
    throw new CliError('no ingest token: set INGEST_TOKEN, or pass --token-file PATH (or INGEST_TOKEN_FILE), or --data-dir DIR (or DATA_DIR) whose ingest-token the server wrote');
  }
  return { url, urlFrom, token, tokenFrom };
}

/** The Odds API key: ODDS_API_KEY, or the file --api-key-file / ODDS_API_KEY_FILE names. */
export function resolveApiKey(flags: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): string {
  const file = flags.get('api-key-file') ?? (env.ODDS_API_KEY_FILE || undefined);
  if (flags.has('api-key-file')) return readSecretFile(file!, '--api-key-file');
  if (env.ODDS_API_KEY !== undefined && env.ODDS_API_KEY.trim() !== '') return env.ODDS_API_KEY.trim();
  if (file !== undefined) return readSecretFile(file, 'ODDS_API_KEY_FILE');
  throw new CliError('the-odds-api needs an API key: set ODDS_API_KEY, or pass --api-key-file PATH (or ODDS_API_KEY_FILE)');
}

const INGEST_HELP = [
  ['--ingest URL', 'INGEST_URL', 'the ingest listener, http://host:port (no default)'],
  ['--data-dir DIR', 'DATA_DIR', "else: the server running on DIR (the address it wrote to DIR/ingest-address; its token DIR/ingest-token)"],
  ['--token-file PATH', 'INGEST_TOKEN_FILE', 'a file whose first line is the ingest token (else INGEST_TOKEN, else DIR/ingest-token)'],
  ['--retry-max S', 'INGEST_RETRY_MAX', 'longest wait (s) before a batch the listener did not take is sent again (default 30)'],
];

function table(rows: readonly (readonly string[])[]): string {
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  return rows.map((r) => `  ${r[0].padEnd(w0)}  ${r[1].padEnd(w1)}  ${r[2]}`).join('\n');
}

/** `npm run feed -- --help`: every option of both modes, its variable and default. */
export function helpText(): string {
  const oddsRows: string[][] = [['--api-key-file PATH', 'ODDS_API_KEY_FILE', 'a file whose first line is the API key (else ODDS_API_KEY)']];
  const flagOf: Record<string, string> = {
    baseUrl: '--base-url URL',
    sports: '--sports LIST',
    regions: '--regions LIST',
    markets: '--markets LIST',
    intervalMs: '--interval S',
    eventIntervalMs: '--event-interval S',
    creditsPerHour: '--credits-per-hour N',
    budgetPerDay: '--budget-per-day N',
    timeoutMs: '--timeout S',
  };
  for (const [key, flag] of Object.entries(flagOf)) {
    const s = ODDS_API_SETTINGS[key as keyof typeof ODDS_API_SETTINGS];
    oddsRows.push([flag, s.env, `${s.help}; ${s.allowed} (default ${s.fallback})`]);
  }
  return [
    'usage: npm run feed -- the-odds-api [options]     poll The Odds API v4 and submit what changed',
    '       npm run feed -- ndjson FILE|- [options]     replay a file of changes (one JSON change a line)',
    '       npm run feed -- --help',
    '',
    'Every option has an environment variable; a flag wins over its variable. Secrets are',
    'never taken from the command line (--token and --api-key are refused): use the',
    'variables or the files.',
    '',
    'Where batches go (both modes):',
    table(INGEST_HELP),
    '',
    'the-odds-api:',
    table(oddsRows),
    '  Featured markets (h2h, spreads, totals; outrights on a futures sport key) are polled on',
    '  /v4/sports/{sport}/odds, every other key per event on /events/{id}/odds; a key the',
    '  mapping does not carry, or one the provider answers 422, is dropped (said once).',
    '  The log prints the plan: what each sport and market costs an hour.',
    '',
    'ndjson:',
    table([
      ['--from-line N', '', 'skip the lines before N (resume after an interruption; default 1)'],
      ['--batch N', '', 'changes per batch (default 1000)'],
    ]),
    '  A sample: npm run feed -- ndjson feeds/samples/sample-replay.ndjson --data-dir DIR',
  ].join('\n');
}
