// The-odds-api feed settings, from flags or the environment (every flag has one):
//   --base-url ODDS_API_BASE_URL   --api-key ODDS_API_KEY   --sports ODDS_API_SPORTS
//   --regions ODDS_API_REGIONS     --markets ODDS_API_MARKETS --interval ODDS_API_INTERVAL (s)
//   --budget-per-day ODDS_API_BUDGET_PER_DAY                 --timeout ODDS_API_TIMEOUT (s)
//   --credits-per-hour ODDS_API_CREDITS_PER_HOUR             --event-interval ODDS_API_EVENT_INTERVAL (s)
//   --retry-max INGEST_RETRY_MAX (s): longest wait before a batch the ingest listener did
//                                     not take is sent again (default 30)
// The API key, the ingest target and its token are resolved by cliOptions.ts when run as
// its own process (never from argv).
// Each value is read by one parser below, used both here (npm run feed) and by
// service/config.ts (FEED=the-odds-api inside the server), so both accept and refuse the
// same texts with the same words.
import { DEFAULT_BASE_URL } from './theOddsApi/providerClient.ts';

export interface TheOddsApiSettings {
  baseUrl: string;
  apiKey: string;
  sports: string[];
  regions: string;
  markets: string[];
  intervalMs: number;
  budgetPerDay: number;
  creditsPerHour: number;
  /** 0: the same as intervalMs. */
  eventIntervalMs: number;
  timeoutMs: number;
}

export interface FeedCliSettings extends TheOddsApiSettings {
  retryMaxMs: number;
}

/** One setting: its variable, default (as written in the environment), what is allowed, and the parser (undefined: not allowed). */
export interface FeedSetting<T> {
  env: string;
  fallback: string;
  allowed: string;
  help: string;
  parse(text: string): T | undefined;
}

const list = (text: string): string[] | undefined => {
  const items = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  return items.length > 0 && items.every((s) => /^[a-z0-9_]+$/.test(s)) ? items : undefined;
};
const seconds = (min: number) => (text: string): number | undefined => (/^\d+(\.\d+)?$/.test(text) && Number(text) >= min ? Math.round(Number(text) * 1000) : undefined);
const httpUrl = (text: string): string | undefined => {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? text : undefined;
  } catch {
    return undefined;
  }
};

export const ODDS_API_SETTINGS = {
  baseUrl: { env: 'ODDS_API_BASE_URL', fallback: DEFAULT_BASE_URL, allowed: 'an http(s) URL', help: 'The Odds API origin', parse: httpUrl } as FeedSetting<string>,
  apiKey: { env: 'ODDS_API_KEY', fallback: '', allowed: 'an API key of The Odds API', help: 'API key of The Odds API (needed with FEED=the-odds-api)', parse: (t: string) => t } as FeedSetting<string>,
  sports: {
    env: 'ODDS_API_SPORTS',
    fallback: 'all-in-season',
    allowed: 'comma-separated sport keys (basketball_nba,soccer_epl) or all-in-season',
    help: 'sport keys the feed polls',
    parse: (t: string) => (t === 'all-in-season' ? ['all-in-season'] : list(t)),
  } as FeedSetting<string[]>,
  regions: { env: 'ODDS_API_REGIONS', fallback: 'us', allowed: 'comma-separated region codes (us,uk,eu,au)', help: 'bookmaker regions', parse: (t: string) => list(t)?.join(',') } as FeedSetting<string>,
  markets: { env: 'ODDS_API_MARKETS', fallback: 'h2h,spreads,totals', allowed: 'comma-separated market keys (h2h,spreads,player_points)', help: 'market keys the feed asks for', parse: list } as FeedSetting<string[]>,
  intervalMs: { env: 'ODDS_API_INTERVAL', fallback: '60', allowed: 'seconds, at least 0.1', help: 'shortest wait between polls (s)', parse: seconds(0.1) } as FeedSetting<number>,
  budgetPerDay: {
    env: 'ODDS_API_BUDGET_PER_DAY',
    fallback: '0',
    allowed: 'a non-negative integer (0: no budget)',
    help: 'credits a day the feed may spend; polls are spaced to fit',
    parse: (t: string) => (/^\d+$/.test(t) ? Number(t) : undefined),
  } as FeedSetting<number>,
  creditsPerHour: {
    env: 'ODDS_API_CREDITS_PER_HOUR',
    fallback: '0',
    allowed: 'a non-negative integer (0: no budget)',
    help: 'credits an hour the feed may spend; polls are spaced to fit (the plan in the log says what each sport and market costs an hour)',
    parse: (t: string) => (/^\d+$/.test(t) ? Number(t) : undefined),
  } as FeedSetting<number>,
  eventIntervalMs: {
    env: 'ODDS_API_EVENT_INTERVAL',
    fallback: '0',
    allowed: 'seconds, at least 0.1, or 0 (the same as the interval)',
    help: 'shortest wait between two passes over a sport\'s events for the per-event markets (s); each pass costs a call per event',
    parse: (t: string) => (t === '0' ? 0 : seconds(0.1)(t)),
  } as FeedSetting<number>,
  timeoutMs: { env: 'ODDS_API_TIMEOUT', fallback: '30', allowed: 'seconds, at least 0.1', help: 'longest wait for one provider answer (s)', parse: seconds(0.1) } as FeedSetting<number>,
} as const;

type SettingKey = keyof typeof ODDS_API_SETTINGS;

const FLAG_OF: Record<SettingKey, string> = {
  baseUrl: 'base-url',
  apiKey: 'api-key',
  sports: 'sports',
  regions: 'regions',
  markets: 'markets',
  intervalMs: 'interval',
  budgetPerDay: 'budget-per-day',
  creditsPerHour: 'credits-per-hour',
  eventIntervalMs: 'event-interval',
  timeoutMs: 'timeout',
};

/** --name value / --name=value pairs, checked against the known flags. */
export function parseFlags(args: readonly string[], known: readonly string[]): { flags: Map<string, string>; rest: string[] } {
  const flags = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      rest.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.includes(name)) throw new Error(`unknown flag --${name} (known: ${known.map((k) => `--${k}`).join(', ')})`);
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { flags, rest };
}

/**
 * The feed's settings from `lookup` (a setting's text, or undefined when unset); throws
 * one Error naming every value that is not allowed. Without an API key: `apiKey` ''.
 */
export function readOddsApiSettings(lookup: (key: SettingKey) => string | undefined, nameOf: (key: SettingKey) => string): { settings: TheOddsApiSettings; problems: string[] } {
  const problems: string[] = [];
  const settings: Record<string, unknown> = {};
  for (const key of Object.keys(ODDS_API_SETTINGS) as SettingKey[]) {
    const setting = ODDS_API_SETTINGS[key] as FeedSetting<unknown>;
    const text = lookup(key)?.trim();
    const value = setting.parse(text === undefined || text === '' ? setting.fallback : text);
    if (value === undefined) problems.push(`${nameOf(key)}=${JSON.stringify(text)} is not allowed: expected ${setting.allowed}`);
    settings[key] = value;
  }
  return { settings: settings as unknown as TheOddsApiSettings, problems };
}

/** `npm run feed -- the-odds-api` settings: flags first, then the environment; the API key as resolved (cliOptions.ts). */
export function theOddsApiSettings(flags: Map<string, string>, env: NodeJS.ProcessEnv, apiKey: string): FeedCliSettings {
  const { settings, problems } = readOddsApiSettings(
    (key) => (key === 'apiKey' ? apiKey : (flags.get(FLAG_OF[key]) ?? (env[ODDS_API_SETTINGS[key].env] || undefined))),
    (key) => (flags.has(FLAG_OF[key]) ? `--${FLAG_OF[key]}` : ODDS_API_SETTINGS[key].env),
  );
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const retryText = flags.get('retry-max') ?? (env.INGEST_RETRY_MAX || '30');
  const retryMaxMs = seconds(0.1)(retryText);
  if (retryMaxMs === undefined) throw new Error(`--retry-max (INGEST_RETRY_MAX) must be seconds, at least 0.1, got ${retryText}`);
  return { ...settings, retryMaxMs };
}

/** Where batches go and with which token: cliOptions.ts resolves these (no secret from argv). */
export const INGEST_FLAGS = ['ingest', 'data-dir', 'token-file'];
export const THE_ODDS_API_FLAGS = [...Object.values(FLAG_OF).filter((f) => f !== 'api-key'), 'api-key-file', ...INGEST_FLAGS, 'retry-max'];
export const NDJSON_FLAGS = ['from-line', 'batch', ...INGEST_FLAGS];
