// `npm run feed -- the-odds-api [flags]` and `npm run feed -- ndjson FILE|- [--from-line N]`.
// Flags are listed in feedSettings.ts (each also an environment variable); batches go
// to the ingest listener over HTTP (--ingest, --token).
import { HttpBatchSink } from './batchSink.ts';
import { THE_ODDS_API_FLAGS, parseFlags, theOddsApiSettings } from './feedSettings.ts';
import { replayNdjson } from './ndjsonReplay.ts';
import { ProviderClient } from './theOddsApi/providerClient.ts';
import { TheOddsApiFeed } from './theOddsApi/theOddsApiFeed.ts';

const USAGE = 'usage: npm run feed -- the-odds-api [--api-key K --sports a,b --regions us --markets h2h,spreads --interval S --budget-per-day N --timeout S --ingest URL --token T --retry-max S]\n       npm run feed -- ndjson FILE|- [--from-line N --batch N --ingest URL --token T]';

function progressWriter(): (line: string) => void {
  const tty = process.stderr.isTTY === true;
  return (line) => process.stderr.write(tty ? `\r${line}\u001b[K` : `${line}\n`);
}

async function main(args: string[]): Promise<void> {
  const [kind, ...rest] = args;
  const env = process.env;
  if (kind === 'the-odds-api') {
    const { flags } = parseFlags(rest, THE_ODDS_API_FLAGS);
    const settings = theOddsApiSettings(flags, env);
    if (settings.token === undefined) throw new Error('--token or INGEST_TOKEN is needed to submit to the ingest listener');
    const tty = process.stderr.isTTY === true;
    // on a terminal the progress line is redrawn in place: a log line starts below it
    const log = (line: string) => process.stderr.write(tty ? `\n${line}\n` : `${line}\n`);
    log(`the-odds-api: polling ${settings.baseUrl} for ${settings.sports.join(',')} (${settings.markets.join(',')}), submitting to ${settings.ingestUrl}`);
    const feed = new TheOddsApiFeed({
      client: new ProviderClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, timeoutMs: settings.timeoutMs, log }),
      sink: new HttpBatchSink({ url: settings.ingestUrl, token: settings.token }),
      sports: settings.sports,
      regions: settings.regions,
      markets: settings.markets,
      intervalMs: settings.intervalMs,
      budgetPerDay: settings.budgetPerDay,
      retryMaxMs: settings.retryMaxMs,
      log,
      progress: progressWriter(),
    });
    process.on('SIGINT', () => feed.stop());
    process.on('SIGTERM', () => feed.stop());
    await feed.run();
    log(`the-odds-api: stopped after ${feed.stats.polls} polls, ${feed.stats.changesSent} changes sent`);
    return;
  }
  if (kind === 'ndjson') {
    const { flags, rest: files } = parseFlags(rest, ['from-line', 'batch', 'ingest', 'token']);
    if (files.length !== 1) throw new Error(`ndjson needs one FILE (or - for stdin)\n${USAGE}`);
    const token = flags.get('token') ?? env.INGEST_TOKEN;
    if (token === undefined) throw new Error('--token or INGEST_TOKEN is needed to submit to the ingest listener');
    const positive = (name: string, fallback: number) => {
      const text = flags.get(name);
      if (text === undefined) return fallback;
      if (!/^[1-9]\d*$/.test(text)) throw new Error(`--${name} must be a positive integer, got ${text}`);
      return Number(text);
    };
    const result = await replayNdjson({
      sink: new HttpBatchSink({ url: flags.get('ingest') ?? env.INGEST_URL ?? 'http://127.0.0.1:8081', token }),
      file: files[0],
      fromLine: positive('from-line', 1),
      batchSize: positive('batch', 1000),
      progress: progressWriter(),
      log: (line) => process.stderr.write(`\n${line}\n`),
    });
    process.stderr.write(`\nndjson: done, ${result.changes} changes in ${result.batches} batches (last line ${result.lastLine})\n`);
    return;
  }
  throw new Error(USAGE);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`\nfeed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
