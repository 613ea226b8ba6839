// `npm run feed`: the two modes (the-odds-api, ndjson) and --help, as a function of its
// arguments and environment that resolves with the exit code, so tests run it in
// process; feeds/cli.ts is the process around it. Every failure is one message naming
// the real problem (a missing target or token and where to give it, a refused token
// and where it came from, a flag that is not known), never a stack trace.
import { HttpBatchSink } from './batchSink.ts';
import { CliError, helpText, refuseSecretFlags, resolveApiKey, resolveIngestTarget, type IngestTarget } from './cliOptions.ts';
import { NDJSON_FLAGS, THE_ODDS_API_FLAGS, parseFlags, theOddsApiSettings } from './feedSettings.ts';
import { replayNdjson } from './ndjsonReplay.ts';
import { ApiKeyRejected, ProviderClient } from './theOddsApi/providerClient.ts';
import { IngestTokenRejected, TheOddsApiFeed } from './theOddsApi/theOddsApiFeed.ts';

export interface CliIo {
  /** Writes to stderr (progress, log lines, the final message). */
  write(text: string): void;
  /** Writes to stdout (--help). */
  out(text: string): void;
  /** True when stderr is a terminal: the progress line is redrawn in place. */
  tty: boolean;
  /** Hands over a stop function for SIGINT / SIGTERM (the process wrapper installs the handlers). */
  onStop?(stop: () => void): void;
}

function tokenRefused(target: IngestTarget, detail: string): string {
  return `the ingest listener at ${target.url} (from ${target.urlFrom}) refused the token from ${target.tokenFrom}: ${detail}. It is not that server's token (its INGEST_TOKEN, or DATA_DIR/ingest-token)`;
}

export async function runFeedCli(args: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  try {
    await run(args, env, io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.write(`${io.tty ? '\n' : ''}feed: ${message}\n`);
    return error instanceof CliError ? 2 : 1;
  }
}

async function run(args: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<void> {
  const [kind, ...rest] = args;
  if (kind === undefined) throw new CliError(`a mode is needed\n${helpText()}`);
  if (kind === '--help' || kind === '-h' || kind === 'help' || rest.includes('--help') || rest.includes('-h')) {
    io.out(`${helpText()}\n`);
    return;
  }
  refuseSecretFlags(rest);
  const progress = (line: string) => io.write(io.tty ? `\r${line}\u001b[K` : `${line}\n`);
  // on a terminal the progress line is redrawn in place: a log line starts below it
  const log = (line: string) => io.write(io.tty ? `\n${line}\n` : `${line}\n`);
  if (kind === 'the-odds-api') {
    const { flags, rest: extra } = parseFlags(rest, THE_ODDS_API_FLAGS);
    if (extra.length > 0) throw new CliError(`the-odds-api takes no file or word, got ${extra.join(' ')} (see --help)`);
    const apiKey = resolveApiKey(flags, env);
    const settings = theOddsApiSettings(flags, env, apiKey);
    const target = resolveIngestTarget(flags, env);
    log(`the-odds-api: polling ${settings.baseUrl} for ${settings.sports.join(',')} (${settings.markets.join(',')}), submitting to ${target.url} (from ${target.urlFrom}, token from ${target.tokenFrom})`);
    const feed = new TheOddsApiFeed({
      client: new ProviderClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, timeoutMs: settings.timeoutMs, log }),
      sink: new HttpBatchSink({ url: target.url, token: target.token }),
      sports: settings.sports,
      regions: settings.regions,
      markets: settings.markets,
      intervalMs: settings.intervalMs,
      eventIntervalMs: settings.eventIntervalMs > 0 ? settings.eventIntervalMs : settings.intervalMs,
      budgetPerDay: settings.budgetPerDay,
      creditsPerHour: settings.creditsPerHour,
      retryMaxMs: settings.retryMaxMs,
      log,
      progress,
    });
    io.onStop?.(() => feed.stop());
    try {
      await feed.run();
    } catch (error) {
      if (error instanceof IngestTokenRejected) throw new Error(tokenRefused(target, error.message));
      if (error instanceof ApiKeyRejected) throw new Error(`${error.message} (the key from ${flags.has('api-key-file') ? `--api-key-file ${flags.get('api-key-file')}` : env.ODDS_API_KEY ? 'ODDS_API_KEY' : 'ODDS_API_KEY_FILE'})`);
      throw error;
    }
    log(`the-odds-api: stopped after ${feed.stats.polls} polls, ${feed.stats.changesSent} changes sent`);
    return;
  }
  if (kind === 'ndjson') {
    const { flags, rest: files } = parseFlags(rest, NDJSON_FLAGS);
    if (files.length !== 1) throw new CliError(`ndjson needs one FILE (or - for stdin), got ${files.length === 0 ? 'none' : files.join(' ')} (see --help)`);
    const target = resolveIngestTarget(flags, env);
    const positive = (name: string, fallback: number) => {
      const text = flags.get(name);
      if (text === undefined) return fallback;
      if (!/^[1-9]\d*$/.test(text)) throw new CliError(`--${name} must be a positive integer, got ${text}`);
      return Number(text);
    };
    const result = await replayNdjson({
      sink: new HttpBatchSink({ url: target.url, token: target.token }),
      file: files[0],
      fromLine: positive('from-line', 1),
      batchSize: positive('batch', 1000),
      progress,
      log,
      tokenFrom: target.tokenFrom,
    }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError(`no such file: ${files[0]}`);
      throw error;
    });
    io.write(`${io.tty ? '\n' : ''}ndjson: done, ${result.changes} changes in ${result.batches} batches (last line ${result.lastLine}) to ${target.url}\n`);
    return;
  }
  throw new CliError(`unknown mode ${JSON.stringify(kind)}: the-odds-api or ndjson (see --help)`);
}
