// API key administration (keys live in SQLite as SHA-256 hashes):
//   npm run keys -- create --plan PRO --label me
//   npm run keys -- list
//   npm run keys -- revoke <id|last4|hash prefix>
// DB_PATH picks the database, as for the server. Safe to run while the server is up:
// the server notices new and revoked keys on its next lookup (see apiKeys.ts).

import { pathToFileURL } from 'node:url';
import { ApiKeys, type ApiKeyRecord } from './apiKeys.ts';
import { dbPathFromEnv, openDatabase } from './database.ts';
import { PersistenceError } from './errors.ts';
import { PLAN_NAMES, PLANS } from './plans.ts';
import { isoMillis, isoSeconds } from '../engine/timeFormat.ts';
import { UsageMeter } from './usageMeter.ts';

const USAGE = `usage: npm run keys -- <command>
  create --plan FREE|PRO|ENTERPRISE [--label TEXT]   make a key (shown once)
  list                                               every key, no plain keys
  revoke <id|last4|hash-prefix>                      revoke one key at once
plans: ${PLAN_NAMES.map((p) => `${p} (${PLANS[p].rateLimitPerMinute}/min, ${PLANS[p].monthlyCap}/month)`).join(', ')}
database: DB_PATH (default $DATA_DIR/odds.db, DATA_DIR default ./data), as for the server`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Runs one command; returns the process exit code. */
export function runKeysCli(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo, now = Date.now()): number {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'create' && command !== 'list' && command !== 'revoke') {
    io.err(`unknown command '${command}'\n${USAGE}`);
    return 2;
  }
  const path = dbPathFromEnv(env);
  const db = openDatabase(path);
  try {
    const keys = new ApiKeys(db);
    if (command === 'create') return create(keys, rest, io, now);
    if (command === 'list') return list(keys, new UsageMeter(db, { flushIntervalMs: 0 }), io, path, now);
    return revoke(keys, rest, io, now);
  } catch (err) {
    if (err instanceof PersistenceError) {
      io.err(`error (${err.code}): ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    db.close();
  }
}

function option(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === `--${name}`) return args[i + 1];
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

function create(keys: ApiKeys, args: readonly string[], io: CliIo, now: number): number {
  const plan = option(args, 'plan');
  if (plan === undefined) {
    io.err(`create needs --plan (${PLAN_NAMES.join(', ')})`);
    return 2;
  }
  const { key, record } = keys.create({ plan, label: option(args, 'label') ?? '', now });
  io.out(`created key #${record.id} (${record.plan}, ${record.rateLimitPerMinute}/min, ${record.monthlyCap}/month)${record.label ? ` label "${record.label}"` : ''}`);
  io.out('');
  io.out(`  ${key}`);
  io.out('');
  io.out('This is the only time the key is shown: only its SHA-256 is stored.');
  return 0;
}

function list(keys: ApiKeys, meter: UsageMeter, io: CliIo, path: string, now: number): number {
  const records = keys.list();
  if (records.length === 0) {
    io.out(`no API keys in ${path}`);
    return 0;
  }
  const header = ['id', 'key', 'plan', 'per min', 'cap/month', 'used (flushed)', 'created', 'revoked', 'label'];
  const rows = records.map((r: ApiKeyRecord) => [
    String(r.id),
    `ok_…${r.last4}`,
    r.plan,
    String(r.rateLimitPerMinute),
    String(r.monthlyCap),
    String(meter.monthlyUsed(r, now)),
    isoSeconds(r.createdAt),
    r.revokedAt === null ? '-' : isoSeconds(r.revokedAt),
    r.label,
  ]);
  for (const line of table([header, ...rows])) io.out(line);
  return 0;
}

function revoke(keys: ApiKeys, args: readonly string[], io: CliIo, now: number): number {
  const ref = args[0];
  if (ref === undefined) {
    io.err('revoke needs a key id, its last 4 characters, or a hash prefix');
    return 2;
  }
  const { record, alreadyRevoked } = keys.revoke(ref, now);
  const when = isoMillis(record.revokedAt ?? now);
  if (alreadyRevoked) io.out(`key #${record.id} (…${record.last4}) was already revoked at ${when}`);
  else io.out(`revoked key #${record.id} (…${record.last4}, ${record.plan}) at ${when}`);
  return 0;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = runKeysCli(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  });
}
