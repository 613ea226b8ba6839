// The-odds-api feed settings from flags or the environment (every flag has one):
//   --base-url ODDS_API_BASE_URL   --api-key ODDS_API_KEY   --sports ODDS_API_SPORTS
//   --regions ODDS_API_REGIONS     --markets ODDS_API_MARKETS --interval ODDS_API_INTERVAL (s)
//   --budget-per-day ODDS_API_BUDGET_PER_DAY
//   --ingest INGEST_URL            --token INGEST_TOKEN  (only when run as its own process)
import { DEFAULT_BASE_URL } from './theOddsApi/providerClient.ts';

export interface TheOddsApiSettings {
  baseUrl: string;
  apiKey: string;
  sports: string[];
  regions: string;
  markets: string[];
  intervalMs: number;
  budgetPerDay: number;
  ingestUrl: string;
  token: string | undefined;
}

const ENV_OF: Record<string, string> = {
  'base-url': 'ODDS_API_BASE_URL',
  'api-key': 'ODDS_API_KEY',
  sports: 'ODDS_API_SPORTS',
  regions: 'ODDS_API_REGIONS',
  markets: 'ODDS_API_MARKETS',
  interval: 'ODDS_API_INTERVAL',
  'budget-per-day': 'ODDS_API_BUDGET_PER_DAY',
  ingest: 'INGEST_URL',
  token: 'INGEST_TOKEN',
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

export function theOddsApiSettings(flags: Map<string, string>, env: NodeJS.ProcessEnv): TheOddsApiSettings {
  const get = (name: string): string | undefined => flags.get(name) ?? (env[ENV_OF[name]] || undefined);
  const apiKey = get('api-key');
  if (apiKey === undefined) throw new Error('the-odds-api needs an API key: --api-key or ODDS_API_KEY');
  const number = (name: string, fallback: number): number => {
    const text = get(name);
    if (text === undefined) return fallback;
    if (!/^\d+(\.\d+)?$/.test(text)) throw new Error(`--${name} (${ENV_OF[name]}) must be a non-negative number, got ${text}`);
    return Number(text);
  };
  const list = (name: string, fallback: string) => (get(name) ?? fallback).split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  return {
    baseUrl: get('base-url') ?? DEFAULT_BASE_URL,
    apiKey,
    sports: list('sports', 'all-in-season'),
    regions: get('regions') ?? 'us',
    markets: list('markets', 'h2h,spreads,totals'),
    intervalMs: number('interval', 60) * 1000,
    budgetPerDay: number('budget-per-day', 0),
    ingestUrl: get('ingest') ?? 'http://127.0.0.1:8081',
    token: get('token'),
  };
}

export const THE_ODDS_API_FLAGS = Object.keys(ENV_OF);
