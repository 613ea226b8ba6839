// The response shapes of The Odds API v4 (https://the-odds-api.com/liveapi/guides/v4/),
// as TypeScript types and the checks that a body really has them. A body that fails a
// check is a MalformedResponse: the feed skips that answer (and says why) instead of
// mapping half of it onto the board.

/** GET /v4/sports: one in-season (or, with all=true, any) sport. */
export interface ProviderSport {
  key: string;
  group: string;
  title: string;
  description: string;
  active: boolean;
  has_outrights: boolean;
}

/** One priced outcome: `point` on spreads and totals, `description` names the player (props) or team (team totals). */
export interface ProviderOutcome {
  name: string;
  price: number;
  point?: number;
  description?: string;
}

export interface ProviderMarket {
  key: string;
  last_update?: string;
  outcomes: ProviderOutcome[];
}

export interface ProviderBookmaker {
  key: string;
  title: string;
  last_update: string;
  markets: ProviderMarket[];
}

/** GET /v4/sports/{sport}/events: an event without odds (home/away are null on outrights). */
export interface ProviderEvent {
  id: string;
  sport_key: string;
  sport_title?: string;
  commence_time: string;
  home_team: string | null;
  away_team: string | null;
}

/** GET /v4/sports/{sport}/odds (an array of these) and /events/{eventId}/odds (one). */
export interface ProviderEventOdds extends ProviderEvent {
  bookmakers: ProviderBookmaker[];
}

/** GET /v4/sports/{sport}/scores: `scores` is null before the game starts. */
export interface ProviderScore extends ProviderEvent {
  completed: boolean;
  scores: { name: string; score: string }[] | null;
  last_update: string | null;
}

export class MalformedResponse extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'MalformedResponse';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function need(condition: boolean, where: string, what: string): void {
  if (!condition) throw new MalformedResponse(`${where}: ${what}`);
}

function checkString(value: unknown, where: string): void {
  need(typeof value === 'string' && value.length > 0, where, 'expected a non-empty string');
}

function checkTime(value: unknown, where: string): void {
  need(typeof value === 'string' && Number.isFinite(Date.parse(value)), where, 'expected an ISO-8601 time');
}

function checkEvent(value: unknown, where: string): asserts value is ProviderEvent {
  need(isObject(value), where, 'expected an event object');
  const e = value as Record<string, unknown>;
  checkString(e.id, `${where}.id`);
  need(/^[A-Za-z0-9._~-]+$/.test(e.id as string) && (e.id as string).length <= 100, `${where}.id`, 'expected a URL-safe id');
  checkString(e.sport_key, `${where}.sport_key`);
  checkTime(e.commence_time, `${where}.commence_time`);
  for (const team of ['home_team', 'away_team'] as const) {
    need(e[team] === null || e[team] === undefined || (typeof e[team] === 'string' && (e[team] as string).length > 0), `${where}.${team}`, 'expected a team name or null');
  }
}

function checkEventOdds(value: unknown, where: string): asserts value is ProviderEventOdds {
  checkEvent(value, where);
  const bookmakers = (value as unknown as Record<string, unknown>).bookmakers;
  need(Array.isArray(bookmakers), `${where}.bookmakers`, 'expected an array');
  (bookmakers as unknown[]).forEach((book, b) => {
    const at = `${where}.bookmakers[${b}]`;
    need(isObject(book), at, 'expected a bookmaker object');
    const k = book as Record<string, unknown>;
    checkString(k.key, `${at}.key`);
    need(typeof k.title === 'string', `${at}.title`, 'expected a string');
    need(Array.isArray(k.markets), `${at}.markets`, 'expected an array');
    (k.markets as unknown[]).forEach((market, m) => {
      const mat = `${at}.markets[${m}]`;
      need(isObject(market), mat, 'expected a market object');
      const mk = market as Record<string, unknown>;
      checkString(mk.key, `${mat}.key`);
      need(Array.isArray(mk.outcomes), `${mat}.outcomes`, 'expected an array');
      (mk.outcomes as unknown[]).forEach((outcome, o) => {
        const oat = `${mat}.outcomes[${o}]`;
        need(isObject(outcome), oat, 'expected an outcome object');
        const out = outcome as Record<string, unknown>;
        checkString(out.name, `${oat}.name`);
        need(typeof out.price === 'number' && Number.isFinite(out.price), `${oat}.price`, 'expected a number');
        need(out.point === undefined || (typeof out.point === 'number' && Number.isFinite(out.point)), `${oat}.point`, 'expected a number');
        need(out.description === undefined || typeof out.description === 'string', `${oat}.description`, 'expected a string');
      });
    });
  });
}

function arrayOf(body: unknown, what: string): unknown[] {
  need(Array.isArray(body), what, `expected an array, got ${body === null ? 'null' : typeof body}`);
  return body as unknown[];
}

export function parseSports(body: unknown): ProviderSport[] {
  const list = arrayOf(body, 'sports');
  list.forEach((sport, i) => {
    need(isObject(sport), `sports[${i}]`, 'expected a sport object');
    checkString((sport as Record<string, unknown>).key, `sports[${i}].key`);
  });
  return list as ProviderSport[];
}

export function parseOddsList(body: unknown): ProviderEventOdds[] {
  const list = arrayOf(body, 'odds');
  list.forEach((event, i) => checkEventOdds(event, `odds[${i}]`));
  return list as ProviderEventOdds[];
}

export function parseEventOdds(body: unknown): ProviderEventOdds {
  checkEventOdds(body, 'event odds');
  return body;
}

export function parseEvents(body: unknown): ProviderEvent[] {
  const list = arrayOf(body, 'events');
  list.forEach((event, i) => checkEvent(event, `events[${i}]`));
  return list as ProviderEvent[];
}

export function parseScores(body: unknown): ProviderScore[] {
  const list = arrayOf(body, 'scores');
  list.forEach((score, i) => {
    checkEvent(score, `scores[${i}]`);
    need(typeof (score as unknown as Record<string, unknown>).completed === 'boolean', `scores[${i}].completed`, 'expected a boolean');
  });
  return list as ProviderScore[];
}
