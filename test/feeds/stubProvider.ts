// A stub of The Odds API v4 for the feed tests: a node:http server on 127.0.0.1 that
// answers /v4/sports, /v4/sports/{sport}/odds, /events, /events/{id}/odds and /scores
// in the documented shapes and by the documented rules: /odds serves the featured
// markets only (any other documented key: 422 "Markets not supported by this endpoint",
// an undocumented key: 422 "Invalid markets"), /events/{id}/odds any documented market;
// each answer carries x-requests-remaining / -used / -last, a call costs markets x
// regions (event odds: the markets it returns x regions; scores 1, 2 with daysFrom;
// sports and events nothing), and errors are {message, error_code, details_url}. Its
// events are built out of a fixture board's rows or written by hand. Tests change its state between polls (move a price, pull an
// outcome, start or finish a game) and queue faults (401, 429 with Retry-After, 500, a
// malformed body) for the next matching request.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { americanToDecimal, decimalToAmerican, type Board, type OddsInput } from '../../engine/model.ts';
import type { ProviderBookmaker, ProviderEventOdds, ProviderOutcome } from '../../feeds/theOddsApi/providerTypes.ts';

export const STUB_API_KEY = 'stub-key';

/** Our subtype/period back to the provider's market key (the inverse of docs/feeds.md's table, for the rows the stub serves). */
function marketKeyOf(row: OddsInput): string | null {
  const period = ({ FULL: '', '1H': '_h1', '1Q': '_q1', '1P': '_p1' } as Record<string, string>)[row.period];
  if (period === undefined) return null;
  switch (row.market) {
    case 'MONEYLINE':
    case 'MONEYLINE_3_WAY':
      return `h2h${period}`;
    case 'SPREAD':
      return `spreads${period}`;
    case 'TOTAL':
      return `totals${period}`;
    case 'TEAM_TOTAL':
      return period === '' ? 'team_totals' : null;
    case 'PLAYER_TOTAL':
      return row.marketSubtype === 'PLAYER_TOTAL_POINTS' ? 'player_points' : row.marketSubtype === 'PLAYER_TOTAL_REBOUNDS' ? 'player_rebounds' : null;
    default:
      return null;
  }
}

const BOOK_KEYS: Record<string, string> = { pinnacle: 'pinnacle', draftkings: 'draftkings', fanduel: 'fanduel', caesars: 'williamhill_us', prizepicks: 'prizepicks' };

function outcomeOf(row: OddsInput, home: string, away: string): ProviderOutcome | null {
  let price = row.priceAmerican;
  if (row.dfsMultiplier !== null) price = decimalToAmerican(Math.round(row.dfsMultiplier * Math.sqrt(3) * 10000) / 10000);
  if (price === null) return null;
  switch (row.market) {
    case 'MONEYLINE':
    case 'MONEYLINE_3_WAY':
      return { name: row.side === 'DRAW' ? 'Draw' : row.side === 'HOME' ? home : away, price };
    case 'SPREAD':
      return { name: row.side === 'HOME' ? home : away, price, point: row.line! };
    case 'TOTAL':
      return { name: row.side === 'OVER' ? 'Over' : 'Under', price, point: row.line! };
    case 'TEAM_TOTAL':
      return { name: row.side === 'OVER' ? 'Over' : 'Under', price, point: row.line!, description: row.teamSide === 'HOME' ? home : away };
    case 'PLAYER_TOTAL':
      return { name: row.side === 'OVER' ? 'Over' : 'Under', price, point: row.line!, description: row.playerName! };
    default:
      return null;
  }
}

export interface StubSport {
  key: string;
  /** Provider events with every market (featured and per-event); /odds serves the featured ones. */
  events: ProviderEventOdds[];
}

/** Provider events (ids `idPrefix` + the game's id) for up to `count` scheduled games of `league` on the board, with the books of BOOK_KEYS. */
export function providerEventsFrom(board: Board, league: string, count: number, idPrefix = 'toa'): ProviderEventOdds[] {
  const games = board.events.filter((e) => e.league === league && !e.isFutures && e.status === 'scheduled').slice(0, count);
  const byId = new Map(games.map((e) => [e.id, e]));
  const books = new Map<string, Map<string, ProviderBookmaker>>();
  board.forEachOdds((row) => {
    const event = byId.get(row.eventId);
    const bookKey = BOOK_KEYS[row.sportsbook];
    const marketKey = marketKeyOf(row);
    if (event === undefined || bookKey === undefined || marketKey === null) return;
    const outcome = outcomeOf(row, event.homeTeamName!, event.awayTeamName!);
    if (outcome === null) return;
    let ofEvent = books.get(row.eventId);
    if (ofEvent === undefined) books.set(row.eventId, (ofEvent = new Map()));
    let book = ofEvent.get(bookKey);
    if (book === undefined) ofEvent.set(bookKey, (book = { key: bookKey, title: bookKey, last_update: new Date(board.options.now).toISOString(), markets: [] }));
    let market = book.markets.find((m) => m.key === marketKey);
    if (market === undefined) book.markets.push((market = { key: marketKey, last_update: book.last_update, outcomes: [] }));
    market.outcomes.push(outcome);
  });
  return games.map((e) => ({
    id: `${idPrefix}${e.id.replace(/[^a-z0-9]/g, '')}`,
    sport_key: '',
    sport_title: league.toUpperCase(),
    commence_time: new Date(e.startTime).toISOString().replace('.000Z', 'Z'),
    home_team: e.homeTeamName,
    away_team: e.awayTeamName,
    bookmakers: [...(books.get(e.id)?.values() ?? [])],
  }));
}

interface Fault {
  path: RegExp;
  status: number;
  headers?: Record<string, string>;
  body: string;
  /** Answer this much later (a provider that stalls). */
  delayMs?: number;
}

export interface StubRequest {
  path: string;
  query: URLSearchParams;
  at: number;
  status: number;
  cost: number;
}

/** The markets /v4/sports/{sport}/odds serves (the provider's "featured" markets). */
export const FEATURED_MARKETS = ['h2h', 'spreads', 'totals', 'outrights'] as const;
const FEATURED: ReadonlySet<string> = new Set(FEATURED_MARKETS);

/**
 * Market keys the provider documents beyond the featured ones (its "additional
 * markets": https://the-odds-api.com/sports-odds-data/betting-markets.html), served by
 * /events/{eventId}/odds only; a key that is neither is unknown to the provider.
 */
export const ADDITIONAL_MARKETS: readonly string[] = [
  'alternate_spreads', 'alternate_totals', 'btts', 'draw_no_bet', 'h2h_3_way', 'team_totals', 'alternate_team_totals',
];
const PERIODS = ['q1', 'q2', 'q3', 'q4', 'h1', 'h2', 'p1', 'p2', 'p3', '1st_1_innings', '1st_3_innings', '1st_5_innings', '1st_7_innings'];
const PERIOD_BASES = ['h2h', 'h2h_3_way', 'spreads', 'alternate_spreads', 'totals', 'alternate_totals', 'team_totals', 'alternate_team_totals'];
const PLAYER_PROP = /^(player|batter|pitcher)_[a-z0-9_]+$/;

/** Whether the provider knows this market key (featured, additional, a period market, a player prop). */
export function documentedMarket(key: string): boolean {
  if (FEATURED.has(key) || ADDITIONAL_MARKETS.includes(key) || PLAYER_PROP.test(key)) return true;
  return PERIOD_BASES.some((base) => PERIODS.some((period) => key === `${base}_${period}`));
}

const REGIONS = new Set(['us', 'us2', 'us_dfs', 'us_ex', 'uk', 'eu', 'au']);
const ERROR_DOCS = 'https://the-odds-api.com/liveapi/guides/v4/api-error-codes.html';
/** An error body as the provider sends it: a message, an error code and where it is documented. */
function providerError(message: string, code: string): { message: string; error_code: string; details_url: string } {
  return { message, error_code: code, details_url: `${ERROR_DOCS}#${code.toLowerCase().replace(/_/g, '-')}` };
}

export class StubProvider {
  readonly sports = new Map<string, StubSport>();
  readonly scores = new Map<string, { completed: boolean; scores: { name: string; score: string }[] | null }>();
  readonly requests: StubRequest[] = [];
  private faults: Fault[] = [];
  remaining = 10_000;
  used = 0;
  /** Credits per (market x region) of an odds call. */
  creditPerMarket = 1;
  /** The markets /odds serves (the provider may feature fewer than documented for a sport). */
  featured: Set<string> = new Set(FEATURED);
  /** Keys this provider does not know, beyond the undocumented ones. */
  unknownMarkets = new Set<string>();
  private server!: http.Server;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  addSport(key: string, events: ProviderEventOdds[]): void {
    for (const e of events) e.sport_key = key;
    this.sports.set(key, { key, events });
  }

  /** The next request whose path matches gets this answer instead. */
  fault(path: RegExp, status: number, body: string, headers?: Record<string, string>, delayMs?: number): void {
    this.faults.push({ path, status, body, headers, delayMs });
  }

  event(id: string): ProviderEventOdds {
    for (const sport of this.sports.values()) {
      const found = sport.events.find((e) => e.id === id);
      if (found !== undefined) return found;
    }
    throw new Error(`no stub event ${id}`);
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.answer(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const log: StubRequest = { path: url.pathname, query: url.searchParams, at: Date.now(), status: 200, cost: 0 };
    this.requests.push(log);
    const send = (status: number, body: unknown, cost: number, headers: Record<string, string> = {}) => {
      // like the provider: a call that costs more than the credits left is refused, and says why
      if (status === 200 && cost > this.remaining) return send(401, providerError('Usage quota has been reached', 'OUT_OF_USAGE_CREDITS'), 0);
      log.status = status;
      log.cost = cost;
      if (status === 200) {
        this.used += cost;
        this.remaining -= cost;
      }
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-requests-remaining': String(this.remaining),
        'x-requests-used': String(this.used),
        'x-requests-last': String(status === 200 ? cost : 0),
        ...headers,
      });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const fault = this.faults.findIndex((f) => f.path.test(url.pathname));
    if (fault >= 0) {
      const [f] = this.faults.splice(fault, 1);
      if (f.delayMs !== undefined) {
        setTimeout(() => {
          if (!res.destroyed) send(f.status, f.body, f.status === 200 ? 1 : 0, f.headers);
        }, f.delayMs);
        return;
      }
      return send(f.status, f.body, f.status === 200 ? 1 : 0, f.headers);
    }
    const apiKey = url.searchParams.get('apiKey');
    if (apiKey === null || apiKey === '') return send(401, providerError('API key is missing', 'MISSING_API_KEY'), 0);
    if (apiKey !== STUB_API_KEY) return send(401, providerError('API key is not valid', 'INVALID_API_KEY'), 0);
    const parts = url.pathname.split('/').filter((p) => p.length > 0);
    if (parts[0] !== 'v4' || parts[1] !== 'sports') return send(404, providerError('Not found', 'NOT_FOUND'), 0);
    // GET /v4/sports: free; in-season sports unless all=true
    if (parts.length === 2) return send(200, [...this.sports.keys()].map((key) => ({ key, group: 'stub', title: key, description: key, active: true, has_outrights: key.endsWith('_winner') })), 0);
    const sport = this.sports.get(parts[2]);
    if (sport === undefined) return send(404, providerError(`Unknown sport: ${parts[2]}`, 'UNKNOWN_SPORT'), 0);
    const live = sport.events.filter((e) => this.scores.get(e.id)?.completed !== true);
    const odds = parts[3] === 'odds' && parts.length === 4;
    const eventOdds = parts[3] === 'events' && parts.length === 6 && parts[5] === 'odds';
    if (odds || eventOdds) {
      const regionList = (url.searchParams.get('regions') ?? '').split(',').filter((r) => r.length > 0);
      if (regionList.length === 0) return send(422, providerError('Missing regions', 'MISSING_REGION'), 0);
      const badRegion = regionList.find((r) => !REGIONS.has(r));
      if (badRegion !== undefined) return send(422, providerError(`Invalid regions: ${badRegion}`, 'INVALID_REGION'), 0);
      const markets = (url.searchParams.get('markets') ?? 'h2h').split(',').filter((m) => m.length > 0);
      const unknown = markets.filter((m) => !documentedMarket(m) || this.unknownMarkets.has(m));
      if (unknown.length > 0) return send(422, providerError(`Invalid markets: ${unknown.join(',')}`, 'INVALID_MARKET'), 0);
      const withMarkets = (e: ProviderEventOdds) => ({
        ...e,
        bookmakers: e.bookmakers
          .map((b) => ({ ...b, markets: b.markets.filter((m) => markets.includes(m.key)) }))
          .filter((b) => b.markets.length > 0),
      });
      if (odds) {
        if (markets.some((m) => !this.featured.has(m))) {
          return send(422, providerError('Markets not supported by this endpoint. Use the /events/{eventId}/odds endpoint for non-featured markets', 'INVALID_MARKET_COMBO'), 0);
        }
        // cost: markets x regions; an answer without events costs nothing
        const answer = live.map(withMarkets);
        return send(200, answer, answer.length === 0 ? 0 : markets.length * regionList.length * this.creditPerMarket);
      }
      const event = live.find((e) => e.id === parts[4]);
      if (event === undefined) return send(404, providerError('Event not found. The event may have expired or the event id is invalid', 'EVENT_NOT_FOUND'), 0);
      const answered = withMarkets(event);
      // cost: the unique markets returned x regions
      const returned = new Set(answered.bookmakers.flatMap((b) => b.markets.map((m) => m.key)));
      return send(200, answered, returned.size * regionList.length * this.creditPerMarket);
    }
    // GET /events: free
    if (parts[3] === 'events' && parts.length === 4) return send(200, live.map(({ bookmakers: _, ...e }) => e), 0);
    if (parts[3] === 'scores' && parts.length === 4) {
      // 1 credit, 2 with daysFrom (completed games of the last days)
      const cost = url.searchParams.has('daysFrom') ? 2 : 1;
      return send(
        200,
        sport.events.map(({ bookmakers: _, ...e }) => ({ ...e, completed: this.scores.get(e.id)?.completed ?? false, scores: this.scores.get(e.id)?.scores ?? null, last_update: null })),
        cost,
      );
    }
    return send(404, providerError('Not found', 'NOT_FOUND'), 0);
  }
}

/** The implied probability's American price moved by `delta` (a few cents), for price moves in tests. */
export function nudged(american: number, delta: number): number {
  const next = decimalToAmerican(Math.round((1 / (1 / americanToDecimal(american) + delta)) * 10000) / 10000);
  return next > -100 && next < 100 ? 100 : next;
}
