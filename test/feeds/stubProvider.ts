// A stub of The Odds API v4 for the feed tests: a node:http server on 127.0.0.1 that
// answers /v4/sports, /v4/sports/{sport}/odds, /events, /events/{id}/odds and /scores
// in the documented shapes, with the quota headers, from events built out of a
// fixture board's rows. Tests change its state between polls (move a price, pull an
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

const FEATURED = new Set(['h2h', 'spreads', 'totals', 'h2h_3_way', 'outrights']);

export class StubProvider {
  readonly sports = new Map<string, StubSport>();
  readonly scores = new Map<string, { completed: boolean; scores: { name: string; score: string }[] | null }>();
  readonly requests: StubRequest[] = [];
  private faults: Fault[] = [];
  remaining = 10_000;
  used = 0;
  /** Credits per (market x region) of an odds call. */
  creditPerMarket = 1;
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
      if (status === 200 && cost > this.remaining) return send(401, { message: 'Usage quota has been reached', error_code: 'OUT_OF_USAGE_CREDITS' }, 0);
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
    if (url.searchParams.get('apiKey') !== STUB_API_KEY) return send(401, { message: 'API key is not valid' }, 0);
    const parts = url.pathname.split('/').filter((p) => p.length > 0);
    if (parts[0] !== 'v4' || parts[1] !== 'sports') return send(404, { message: 'not found' }, 0);
    if (parts.length === 2) return send(200, [...this.sports.keys()].map((key) => ({ key, group: 'stub', title: key, description: key, active: true, has_outrights: key.endsWith('_winner') })), 0);
    const sport = this.sports.get(parts[2]);
    if (sport === undefined) return send(404, { message: `unknown sport ${parts[2]}` }, 0);
    const markets = (url.searchParams.get('markets') ?? 'h2h').split(',');
    const regions = (url.searchParams.get('regions') ?? 'us').split(',').length;
    const live = sport.events.filter((e) => this.scores.get(e.id)?.completed !== true);
    const withMarkets = (e: ProviderEventOdds) => ({
      ...e,
      bookmakers: e.bookmakers
        .map((b) => ({ ...b, markets: b.markets.filter((m) => markets.includes(m.key)) }))
        .filter((b) => b.markets.length > 0),
    });
    if (parts[3] === 'odds' && parts.length === 4) {
      if (markets.some((m) => !FEATURED.has(m))) return send(422, { message: 'Markets not supported by this endpoint' }, 0);
      return send(200, live.map(withMarkets), markets.length * regions * this.creditPerMarket);
    }
    if (parts[3] === 'events' && parts.length === 4) return send(200, live.map(({ bookmakers: _, ...e }) => e), 0);
    if (parts[3] === 'events' && parts[5] === 'odds') {
      const event = live.find((e) => e.id === parts[4]);
      if (event === undefined) return send(404, { message: 'Event not found' }, 0);
      const answered = withMarkets(event);
      const returned = new Set(answered.bookmakers.flatMap((b) => b.markets.map((m) => m.key)));
      return send(200, answered, Math.max(1, returned.size) * regions * this.creditPerMarket);
    }
    if (parts[3] === 'scores') {
      const cost = url.searchParams.has('daysFrom') ? 2 : 1;
      return send(
        200,
        sport.events.map(({ bookmakers: _, ...e }) => ({ ...e, completed: this.scores.get(e.id)?.completed ?? false, scores: this.scores.get(e.id)?.scores ?? null, last_update: null })),
        cost,
      );
    }
    return send(404, { message: 'not found' }, 0);
  }
}

/** The implied probability's American price moved by `delta` (a few cents), for price moves in tests. */
export function nudged(american: number, delta: number): number {
  const next = decimalToAmerican(Math.round((1 / (1 / americanToDecimal(american) + delta)) * 10000) / 10000);
  return next > -100 && next < 100 ? 100 : next;
}
