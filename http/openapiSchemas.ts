// Shared OpenAPI 3.1 component schemas (JSON Schema 2020-12). Response bodies are
// validated against these in tests, so they state the presence rules exactly, and
// they carry in their descriptions the rules a client needs (this is the contract).

import { EVENT_STATUSES, LEG_SIDES, SIDES } from '../engine/model.ts';
import { SERVED_PATTERNS, servedRowSchema } from '../engine/rowFields.ts';
import { ERROR_CODES } from './errors.ts';
import { ARCHIVE_COLUMNS, EVENT_KEY_COLUMN } from '../persistence/archive/archiveSchema.ts';
import { DEVIG_METHODS } from '../engine/signals/devig.ts';

type Schema = Record<string, unknown>;

const { ISO_MILLIS, MINUTE_NO_ZONE, CODE, UPPER_SNAKE, ID } = SERVED_PATTERNS;

const dateTime = (description: string): Schema => ({ type: 'string', format: 'date-time', pattern: ISO_MILLIS, description });
const int32 = (description: string, minimum?: number): Schema => ({ type: 'integer', format: 'int32', ...(minimum !== undefined && { minimum }), description });

const Envelope: Schema = {
  type: 'object',
  description: 'The response envelope of every JSON endpoint except the snapshot. Single-item lookups also return an array.',
  required: ['success', 'data', 'nextCursor', 'meta'],
  additionalProperties: false,
  properties: {
    success: { const: true },
    data: { type: 'array', description: 'Result rows; each endpoint documents the item schema.' },
    nextCursor: {
      type: ['string', 'null'],
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'Opaque base64url cursor (HMAC-signed, bound to the filters of the walk). Pass it back verbatim as cursor; null on the last page.',
    },
    meta: {
      type: 'object',
      required: ['count', 'updated'],
      additionalProperties: false,
      properties: {
        count: int32('Rows in data.', 0),
        updated: dateTime(
          'On /odds/updated: the board as-of time when the walk\'s first page was read (pass it as the next since). Elsewhere: the latest updated among the page rows, or when their source data last changed.',
        ),
        note: { type: 'string', description: 'Explanations such as an out-of-season league (200 with empty data) or a since older than the tombstone horizon.' },
        warnings: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'Present only when something was ignored, e.g. unknown query parameters.',
        },
      },
    },
  },
};

const ErrorSchema: Schema = {
  type: 'object',
  description:
    'Every error body. 400 invalid_parameter | missing_parameter | invalid_cursor | bad_request (a malformed request); 401 invalid_api_key | missing_api_key; 404 not_found; 405 method_not_allowed (with Allow); 413 payload_too_large; 414 uri_too_long; 429 rate_limited (with Retry-After); 431 headers_too_large; 505 http_version_not_supported; 500 internal_error (detail carries a request id, also in X-Request-Id); 503 not_ready (health probes). The ingest listener (its own port and document) adds invalid_token, invalid_batch, batch_too_large, unsupported_media_type and log_unavailable; the ingest port of a read replica answers every write 403 read_only. Every transport answers these (bad_request, uri_too_long, headers_too_large, method_not_allowed, http_version_not_supported) and closes the connection after a malformed request.',
  required: ['success', 'code', 'detail', 'param'],
  additionalProperties: false,
  properties: {
    success: { const: false },
    code: { type: 'string', enum: [...ERROR_CODES] },
    detail: { type: 'string', description: 'A human sentence; for enums it names the valid values.' },
    param: { type: ['string', 'null'], description: 'The offending parameter, or null.' },
    validValues: { type: 'array', items: { type: 'string' }, description: 'The closed set, for enum parameters.' },
  },
};

const PRICE_FIELDS = ['priceAmerican', 'priceDecimal'];

/** OddsRow's fields, from the row's field table (engine/rowFields.ts). */
const SERVED_ROW = servedRowSchema();

const OddsRow: Schema = {
  type: 'object',
  description:
    'One price at one book. Presence rules: priceAmerican/priceDecimal per odds_format (all: both; american or decimal: that one; probability: neither, priceProbability instead); DFS pick\'em rows carry dfsMultiplier and no price fields; line is absent on pure moneylines and categorical futures; playerId and playerName only on player props; marketScope only on futures, segment only on segment-scoped futures; removed: true only on delta-feed tombstones (kept at least 10 minutes).',
  required: SERVED_ROW.required,
  additionalProperties: false,
  properties: SERVED_ROW.properties,
  dependentRequired: { playerId: ['playerName'], playerName: ['playerId'], segment: ['marketScope'] },
  dependentSchemas: {
    priceProbability: { not: { anyOf: PRICE_FIELDS.map((field) => ({ required: [field] })) } },
    dfsMultiplier: { not: { anyOf: [...PRICE_FIELDS, 'priceProbability'].map((field) => ({ required: [field] })) } },
  },
};

const Team: Schema = {
  type: 'object',
  description: 'A team. conference and division are null where a league has none.',
  required: ['id', 'name', 'abbreviation', 'league'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: ID },
    name: { type: 'string' },
    abbreviation: { type: 'string' },
    league: { type: 'string', pattern: CODE },
    conference: { type: ['string', 'null'] },
    division: { type: ['string', 'null'] },
    venueId: { type: ['string', 'null'] },
  },
};

const Player: Schema = {
  type: 'object',
  description: 'A player.',
  required: ['id', 'name', 'league', 'teamId', 'position'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: ID },
    name: { type: 'string' },
    league: { type: 'string', pattern: CODE },
    teamId: { type: 'string', pattern: ID },
    position: { type: 'string' },
  },
};

const Sportsbook: Schema = {
  type: 'object',
  description: 'A sportsbook or DFS source. marketCount counts live odds rows of the source, suspended included, tombstones excluded.',
  required: ['id', 'marketCount'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: CODE },
    marketCount: int32('Live odds rows at this source.', 0),
    name: { type: 'string' },
    kind: { type: 'string', enum: ['sharp', 'retail', 'dfs'] },
  },
};

const MarketType: Schema = {
  type: 'object',
  description: 'A market type. /markets aggregates across subtypes and omits marketSubtype; /markets/active lists (marketType, marketSubtype) pairs. liveCount counts live odds rows (suspended included, tombstones excluded).',
  required: ['marketType', 'liveCount'],
  additionalProperties: false,
  properties: {
    marketType: { type: 'string', pattern: UPPER_SNAKE },
    marketSubtype: { type: 'string', pattern: UPPER_SNAKE },
    liveCount: int32('Live odds rows.', 0),
  },
};

const Status: Schema = {
  type: 'object',
  description: 'totalMarkets = live odds rows (suspended included, tombstones excluded) = sum of marketCount over sportsbooks; sportsbooks = sources with live rows.',
  required: ['totalMarkets', 'sportsbooks'],
  additionalProperties: false,
  properties: {
    totalMarkets: int32('Live odds rows on the board.', 0),
    sportsbooks: int32('Sources with at least one live row.', 0),
  },
};

const MINUTE_Z = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}Z$';
const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
const nullableString = { type: ['string', 'null'] };
const EVENT_STATUS = { type: 'string', enum: [...EVENT_STATUSES], description: 'Transitions: scheduled -> in_progress -> final; scheduled -> postponed -> scheduled; scheduled or postponed -> cancelled; in_progress <-> suspended. A final or cancelled event drops its game lines from the board.' };

const eventProperties: Record<string, unknown> = {
  id: { type: 'string', pattern: ID },
  homeTeamId: { ...nullableString, description: 'null on a futures anchor.' },
  homeTeamName: nullableString,
  awayTeamId: nullableString,
  awayTeamName: nullableString,
  startTime: { type: 'string', pattern: MINUTE_Z, description: 'UTC, minute precision, ending in Z. On a futures anchor: its settlement date.' },
  status: EVENT_STATUS,
  league: { type: 'string', pattern: CODE },
  hasOdds: { type: 'boolean' },
  venueId: nullableString,
  seasonYear: int32('Season year.'),
  context: { type: 'object', description: 'Raw league-specific matchup context (weather, lineups, probable pitchers, officials).' },
};
const EVENT_REQUIRED = ['id', 'homeTeamId', 'homeTeamName', 'awayTeamId', 'awayTeamName', 'startTime', 'status', 'league', 'hasOdds', 'venueId', 'seasonYear', 'context'];

const Event: Schema = {
  type: 'object',
  description: 'Event list row. Futures anchors are left out of lists unless status or include_futures=true asks.',
  required: EVENT_REQUIRED,
  additionalProperties: false,
  properties: eventProperties,
};

const EventDetail: Schema = {
  type: 'object',
  description: 'Single-event lookup: the event plus homeScore and awayScore once a box score exists.',
  required: EVENT_REQUIRED,
  additionalProperties: false,
  properties: { ...eventProperties, homeScore: int32('Final home score.'), awayScore: int32('Final away score.') },
  dependentRequired: { homeScore: ['awayScore'], awayScore: ['homeScore'] },
};

const Season: Schema = {
  type: 'object',
  description: 'A league season. Dates are YYYY-MM-DD (UTC).',
  required: ['id', 'league', 'year', 'name', 'startDate', 'endDate', 'status', 'futuresEventId'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: ID },
    league: { type: 'string', pattern: CODE },
    year: int32('Calendar year the season is filed under.'),
    name: { type: 'string' },
    startDate: { type: 'string', pattern: DATE },
    endDate: { type: 'string', pattern: DATE },
    status: { type: 'string', enum: ['upcoming', 'in_progress', 'completed'] },
    futuresEventId: { ...nullableString, description: 'The synthetic season event anchoring this season\'s futures.' },
  },
};

const TeamBoxRow: Schema = {
  type: 'object',
  description: 'Team box stat row. teamId says whose row it is; result is from that team\'s view: 1 win, 0 draw, -1 loss.',
  required: ['eventId', 'teamId', 'homeId', 'awayId', 'league', 'homeScore', 'awayScore', 'result', 'stats'],
  additionalProperties: false,
  properties: {
    eventId: { type: 'string', pattern: ID },
    teamId: { type: 'string', pattern: ID },
    homeId: { type: 'string', pattern: ID },
    awayId: { type: 'string', pattern: ID },
    league: { type: 'string', pattern: CODE },
    homeScore: int32('Home score.'),
    awayScore: int32('Away score.'),
    result: { type: 'integer', enum: [-1, 0, 1] },
    stats: { type: 'object', description: 'Raw per-event team stats.' },
  },
};

const PlayerBoxRow: Schema = {
  type: 'object',
  description: 'Player box stat row. date is YYYY-MM-DD of the event.',
  required: ['eventId', 'playerId', 'teamId', 'date', 'data'],
  additionalProperties: false,
  properties: {
    eventId: { type: 'string', pattern: ID },
    playerId: { type: 'string', pattern: ID },
    teamId: { type: 'string', pattern: ID },
    date: { type: 'string', pattern: DATE },
    data: { type: 'object', description: 'Raw per-event player stats.' },
  },
};

const EventBoxScore: Schema = {
  type: 'object',
  description: '/events/{id}/stats, unpaginated: one object per event.',
  required: ['eventId', 'league', 'teams', 'players'],
  additionalProperties: false,
  properties: {
    eventId: { type: 'string', pattern: ID },
    league: { type: 'string', pattern: CODE },
    teams: { type: 'array', items: { $ref: '#/components/schemas/TeamBoxRow' } },
    players: { type: 'array', items: { $ref: '#/components/schemas/PlayerBoxRow' } },
  },
};

const probability = (description: string): Schema => ({ type: 'number', minimum: 0, maximum: 1, description });

const Edge: Schema = {
  type: 'object',
  description: 'A DFS line against sharp-book no-vig fair value. Sorted by edge descending, then id. A screening signal, not a guarantee.',
  required: ['id', 'eventId', 'league', 'source', 'market', 'marketSubtype', 'period', 'playerId', 'playerName', 'selection', 'side', 'line', 'dfsMultiplier', 'breakevenProbability', 'fairProbability', 'fairPriceAmerican', 'edge', 'sharpBooks', 'devig', 'eventStartTime', 'updated'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The DFS odds row id the edge is about.' },
    eventId: { type: 'string', pattern: ID },
    league: { type: 'string', pattern: CODE },
    source: { type: 'string', pattern: CODE, description: 'DFS source id.' },
    market: { type: 'string', pattern: UPPER_SNAKE },
    marketSubtype: { type: 'string', pattern: UPPER_SNAKE },
    period: { type: 'string', pattern: UPPER_SNAKE },
    playerId: nullableString,
    playerName: nullableString,
    selection: { type: 'string' },
    side: { type: 'string', enum: [...LEG_SIDES] },
    line: { type: ['number', 'null'] },
    dfsMultiplier: { type: 'number', exclusiveMinimum: 0 },
    breakevenProbability: probability('1 / (baseLegDecimal(source) * dfsMultiplier).'),
    fairProbability: probability('No-vig probability from the sharp books (mean over books).'),
    fairPriceAmerican: { type: 'integer', format: 'int32' },
    edge: { type: 'number', description: 'fairProbability - breakevenProbability.' },
    sharpBooks: { type: 'array', items: { type: 'string', pattern: CODE }, minItems: 1 },
    devig: { type: 'string', enum: [...DEVIG_METHODS] },
    eventStartTime: { type: 'string', pattern: MINUTE_NO_ZONE },
    updated: dateTime('Latest updated among the rows the edge was computed from.'),
  },
};

const ArbitrageLeg: Schema = {
  type: 'object',
  required: ['oddsId', 'sportsbook', 'side', 'selection', 'priceAmerican', 'priceDecimal', 'stake', 'updated'],
  additionalProperties: false,
  properties: {
    oddsId: { type: 'string' },
    sportsbook: { type: 'string', pattern: CODE },
    side: { type: 'string', enum: [...LEG_SIDES] },
    selection: { type: 'string' },
    priceAmerican: { type: 'integer', format: 'int32' },
    priceDecimal: { type: 'number', exclusiveMinimum: 1 },
    stake: { type: 'number', minimum: 0, maximum: 1, description: 'Equal-payout fraction of bankroll: (1/d_i) / impliedSum; legs sum to 1.' },
    updated: dateTime('The leg row\'s updated.'),
  },
};

const Arbitrage: Schema = {
  type: 'object',
  description:
    'A cross-book opportunity: one non-suspended price per side from non-DFS books, every leg on a different book, chosen for the smallest implied sum, same line; middles and futures never appear. A book whose own prices sum below 1 is a data problem of that book, never an arbitrage: it is listed in flaggedBooks. Sorted by profit descending, then id.',
  required: ['id', 'type', 'eventId', 'league', 'market', 'marketSubtype', 'period', 'line', 'profit', 'impliedSum', 'legs', 'eventStartTime', 'updated', 'flaggedBooks'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: ['two_way', 'three_way'] },
    eventId: { type: 'string', pattern: ID },
    league: { type: 'string', pattern: CODE },
    market: { type: 'string', pattern: UPPER_SNAKE },
    marketSubtype: { type: 'string', pattern: UPPER_SNAKE },
    period: { type: 'string', pattern: UPPER_SNAKE },
    line: { type: ['number', 'null'] },
    profit: { type: 'number', description: '1/impliedSum - 1.' },
    impliedSum: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    legs: { type: 'array', minItems: 2, maxItems: 3, items: { $ref: '#/components/schemas/ArbitrageLeg' } },
    eventStartTime: { type: 'string', pattern: MINUTE_NO_ZONE },
    updated: dateTime('Latest updated among the legs.'),
    flaggedBooks: {
      type: 'array',
      description: "Books of this market whose own prices sum below 1 (a negative margin on their own): a data problem of that book, lowest sum first. Usually empty.",
      items: { $ref: '#/components/schemas/FlaggedBook' },
    },
  },
};

const FlaggedBook: Schema = {
  type: 'object',
  required: ['sportsbook', 'impliedSum'],
  additionalProperties: false,
  properties: {
    sportsbook: { type: 'string', pattern: CODE },
    impliedSum: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1, description: "The book's own best prices' implied probabilities summed." },
  },
};

// -- the trader screens (engine/signals/screenRecords.ts) --------------------------

const SIDE = { type: 'string', enum: ['HOME', 'AWAY', 'DRAW', 'OVER', 'UNDER'] };
const screenMarket = {
  eventId: { type: 'string', pattern: ID },
  league: { type: 'string', pattern: CODE },
  market: { type: 'string', pattern: UPPER_SNAKE },
  marketSubtype: { type: 'string', pattern: UPPER_SNAKE },
  period: { type: 'string', pattern: UPPER_SNAKE },
  playerId: nullableString,
  playerName: nullableString,
  eventStartTime: { type: 'string', pattern: MINUTE_NO_ZONE },
};
const SCREEN_MARKET_FIELDS = Object.keys(screenMarket);

const FairOutcome: Schema = {
  type: 'object',
  required: ['side', 'fairProbability', 'fairPriceDecimal', 'fairPriceAmerican'],
  additionalProperties: false,
  properties: { side: SIDE, fairProbability: probability('Weighted mean of the sharp books\' no-vig probabilities.'), fairPriceDecimal: { type: 'number', exclusiveMinimum: 1 }, fairPriceAmerican: { type: 'integer', format: 'int32' } },
};

const WeightedBook: Schema = {
  type: 'object',
  required: ['sportsbook', 'weight'],
  additionalProperties: false,
  properties: { sportsbook: { type: 'string', pattern: CODE }, weight: { type: 'number', exclusiveMinimum: 0 } },
};

const FairLine: Schema = {
  type: 'object',
  description: 'The no-vig line of one market group from the fair-line books (FAIR_LINE_BOOKS), weighted. Sorted by id.',
  required: ['id', ...SCREEN_MARKET_FIELDS, 'line', 'devig', 'outcomes', 'sharpBooks', 'quotes', 'oldestQuoteAgeMs', 'newestQuoteAgeMs', 'updated'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The market group id.' },
    ...screenMarket,
    line: { type: ['number', 'null'], description: 'The HOME side\'s line (spreads), the total, null on moneylines.' },
    devig: { type: 'string', enum: [...DEVIG_METHODS] },
    outcomes: { type: 'array', minItems: 2, maxItems: 3, items: { $ref: '#/components/schemas/FairOutcome' } },
    sharpBooks: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/WeightedBook' } },
    quotes: { type: 'integer', minimum: 2, description: 'Sharp quotes that formed the line (books used times outcomes).' },
    oldestQuoteAgeMs: { type: 'number', description: 'Age at the read of the oldest quote used.' },
    newestQuoteAgeMs: { type: 'number', description: 'Age at the read of the newest quote used.' },
    updated: dateTime('The newest quote used.'),
  },
};

const BestOutcome: Schema = {
  type: 'object',
  required: ['side', 'priceAmerican', 'priceDecimal', 'sportsbooks', 'oddsId', 'updated'],
  additionalProperties: false,
  properties: {
    side: SIDE,
    priceAmerican: { type: 'integer', format: 'int32' },
    priceDecimal: { type: 'number', exclusiveMinimum: 1 },
    sportsbooks: { type: 'array', minItems: 1, items: { type: 'string', pattern: CODE }, description: 'Every book at that price, alphabetical.' },
    oddsId: { type: 'string', description: 'The odds row of the first of them.' },
    updated: dateTime('That row\'s updated.'),
  },
};

const BestPrice: Schema = {
  type: 'object',
  description: 'The best price per outcome across the non-DFS books and the hold of that best-price market. Lowest hold first, then id.',
  required: ['id', ...SCREEN_MARKET_FIELDS, 'line', 'outcomes', 'hold', 'updated'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The market group id.' },
    ...screenMarket,
    line: { type: ['number', 'null'] },
    outcomes: { type: 'array', minItems: 2, maxItems: 3, items: { $ref: '#/components/schemas/BestOutcome' } },
    hold: { type: 'number', description: 'sum(1 / best decimal) - 1; negative: an arbitrage.' },
    updated: dateTime('Latest updated among the best rows.'),
  },
};

const PositiveEv: Schema = {
  type: 'object',
  description: 'One book\'s price against the fair line. Highest ev first, then id.',
  required: ['id', 'groupId', ...SCREEN_MARKET_FIELDS, 'sportsbook', 'selection', 'side', 'line', 'priceAmerican', 'priceDecimal', 'fairProbability', 'fairPriceAmerican', 'ev', 'devig', 'sharpBooks', 'updated'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The odds row id.' },
    groupId: { type: 'string' },
    ...screenMarket,
    sportsbook: { type: 'string', pattern: CODE },
    selection: { type: 'string' },
    side: SIDE,
    line: { type: ['number', 'null'] },
    priceAmerican: { type: 'integer', format: 'int32' },
    priceDecimal: { type: 'number', exclusiveMinimum: 1 },
    fairProbability: probability('The fair line\'s probability of this side.'),
    fairPriceAmerican: { type: 'integer', format: 'int32' },
    ev: { type: 'number', description: 'fairProbability * priceDecimal - 1.' },
    devig: { type: 'string', enum: [...DEVIG_METHODS] },
    sharpBooks: { type: 'array', minItems: 1, items: { type: 'string', pattern: CODE } },
    updated: dateTime('Latest of the row\'s and the used sharp quotes\' updates.'),
  },
};

const MiddleLeg: Schema = {
  type: 'object',
  required: ['oddsId', 'sportsbook', 'side', 'line', 'priceAmerican', 'priceDecimal', 'stake', 'updated'],
  additionalProperties: false,
  properties: {
    oddsId: { type: 'string' },
    sportsbook: { type: 'string', pattern: CODE },
    side: SIDE,
    line: { type: 'number' },
    priceAmerican: { type: 'integer', format: 'int32' },
    priceDecimal: { type: 'number', exclusiveMinimum: 1 },
    stake: { type: 'number', minimum: 0, maximum: 1, description: '(1/d_i) / impliedSum: the legs pay the same when one wins.' },
    updated: dateTime('The leg row\'s updated.'),
  },
};

const Middle: Schema = {
  type: 'object',
  description: 'Opposite sides at different lines where both can win. Lowest worst-case cost first, then id.',
  required: ['id', 'type', ...SCREEN_MARKET_FIELDS, 'width', 'legs', 'impliedSum', 'worstCaseCost', 'middleProfit', 'updated'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: '{eventId}:{subtype}:{period}:{scope}:{low line}:{high line}.' },
    type: { type: 'string', enum: ['spread', 'total'] },
    ...screenMarket,
    width: { type: 'number', exclusiveMinimum: 0 },
    legs: { type: 'array', minItems: 2, maxItems: 2, items: { $ref: '#/components/schemas/MiddleLeg' } },
    impliedSum: { type: 'number', exclusiveMinimum: 0 },
    worstCaseCost: { type: 'number', description: '1 - 1/impliedSum; negative: an arbitrage.' },
    middleProfit: { type: 'number', description: '2/impliedSum - 1.' },
    updated: dateTime('Latest leg update.'),
  },
};

const StaleBook: Schema = {
  type: 'object',
  required: ['sportsbook', 'oddsId', 'priceAmerican', 'priceDecimal', 'updated'],
  additionalProperties: false,
  properties: {
    sportsbook: { type: 'string', pattern: CODE },
    oddsId: { type: 'string' },
    priceAmerican: { type: 'integer', format: 'int32' },
    priceDecimal: { type: 'number', exclusiveMinimum: 1 },
    updated: dateTime('That row\'s updated.'),
  },
};

const SteamMove: Schema = {
  type: 'object',
  description: 'A fair-line book\'s price shortening past the threshold within the window. Newest first.',
  required: ['id', 'oddsId', 'groupId', ...SCREEN_MARKET_FIELDS, 'sportsbook', 'selection', 'side', 'line', 'fromPriceAmerican', 'toPriceAmerican', 'fromPriceDecimal', 'toPriceDecimal', 'movePoints', 'moveCents', 'from', 'at', 'staleBooks'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: '{oddsId}@{epoch ms of the move}.' },
    oddsId: { type: 'string' },
    groupId: { type: 'string' },
    ...screenMarket,
    sportsbook: { type: 'string', pattern: CODE },
    selection: { type: 'string' },
    side: SIDE,
    line: { type: ['number', 'null'] },
    fromPriceAmerican: { type: 'integer', format: 'int32' },
    toPriceAmerican: { type: 'integer', format: 'int32' },
    fromPriceDecimal: { type: 'number', exclusiveMinimum: 1 },
    toPriceDecimal: { type: 'number', exclusiveMinimum: 1 },
    movePoints: { type: 'number', exclusiveMinimum: 0, description: 'Implied probability gained, percentage points.' },
    moveCents: { type: 'number', minimum: 0, description: 'American cents (-110 -> -125: 15; -105 -> +105: 10).' },
    from: dateTime('When the starting price was first quoted.'),
    at: dateTime('The move.'),
    staleBooks: { type: 'array', items: { $ref: '#/components/schemas/StaleBook' }, description: 'Non-DFS books quoting that side above the new sharp price when the move was seen; highest price first.' },
  },
};

const HistoricalOddsRow: Schema = {
  type: 'object',
  description: 'A selection\'s price in force at the requested time, rebuilt from price history. No player attribution. Selections with no history at or before date are left out.',
  required: ['id', 'eventId', 'sportsbook', 'market', 'marketSubtype', 'period', 'selection', 'side', 'priceAmerican', 'asOf', 'suspended'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$' },
    eventId: { type: 'string', pattern: ID },
    sportsbook: { type: 'string', pattern: CODE },
    market: { type: 'string', pattern: UPPER_SNAKE },
    marketSubtype: { type: 'string', pattern: UPPER_SNAKE },
    period: { type: 'string', pattern: UPPER_SNAKE },
    selection: { type: 'string' },
    side: { type: 'string', enum: [...SIDES] },
    line: { type: 'number', description: 'Absent on pure moneylines.' },
    priceAmerican: { type: ['integer', 'null'], format: 'int32', description: 'null on DFS pick\'em rows, which have no American price.' },
    asOf: dateTime('First-seen time of the price in force.'),
    suspended: { type: 'boolean' },
  },
};

const SelectionHistoryRow: Schema = {
  type: 'object',
  description: 'One book\'s row of a selection with its price history (the snapshot\'s priceHistory, oldest first, at most 50). No player attribution. removed: true once the selection left the board.',
  required: ['id', 'eventId', 'sportsbook', 'market', 'marketSubtype', 'period', 'selection', 'side', 'eventStartTime', 'priceHistory'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$' },
    eventId: { type: 'string', pattern: ID },
    sportsbook: { type: 'string', pattern: CODE },
    market: { type: 'string', pattern: UPPER_SNAKE },
    marketSubtype: { type: 'string', pattern: UPPER_SNAKE },
    period: { type: 'string', pattern: UPPER_SNAKE },
    selection: { type: 'string' },
    side: { type: 'string', enum: [...SIDES] },
    line: { type: 'number', description: 'Absent on pure moneylines.' },
    eventStartTime: { type: 'string', pattern: MINUTE_NO_ZONE },
    removed: { const: true },
    priceHistory: { type: 'array', maxItems: 50, items: { $ref: '#/components/schemas/PriceHistoryEntry' } },
  },
};

const ArchivePricePoint: Schema = {
  type: 'object',
  description: 'An odds row as it stood after one archived change (docs/archive.md): a tick that only toggles suspension keeps the price before it.',
  required: ['seq', 'pos', 'time', 'kind', 'id', 'sportsbook', 'selectionId', 'priceAmerican', 'priceDecimal', 'dfsMultiplier', 'suspended', 'line', 'removed'],
  additionalProperties: false,
  properties: {
    seq: { type: 'integer', minimum: 1, description: 'The write-ahead log record the change came in.' },
    pos: int32("The change's place in its record, from 0; (seq, pos) is unique and in apply order.", 0),
    time: dateTime('When the board applied the change.'),
    kind: { type: 'string', enum: ['price', 'upsert', 'remove'] },
    id: { type: 'string', pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$' },
    sportsbook: { type: 'string' },
    selectionId: { type: 'string' },
    priceAmerican: { type: ['integer', 'null'], description: 'The American price in force after the change; null on DFS rows, removed rows, and before any price was archived.' },
    priceDecimal: { type: ['number', 'null'], description: 'priceAmerican as a decimal price (4 places).' },
    dfsMultiplier: { type: ['number', 'null'] },
    suspended: { type: 'boolean' },
    line: { type: ['number', 'null'] },
    removed: { type: 'boolean', description: 'true on the change that removed the row.' },
  },
};

const ClosingLine: Schema = {
  type: 'object',
  description: "One odds row's opening and closing price, and its no-vig closing probability within its market group at its book.",
  required: ['id', 'sportsbook', 'selectionId', 'marketGroup', 'opening', 'closing', 'noVigProbability', 'noVigDecimal'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$' },
    sportsbook: { type: 'string' },
    selectionId: { type: 'string' },
    marketGroup: { type: 'string', description: 'The selection id without its side (HOME/AWAY/DRAW/OVER/UNDER/YES/NO) and with a spread\'s sign dropped: the outcomes devigged together.' },
    opening: { oneOf: [{ $ref: '#/components/schemas/ArchivePricePoint' }, { type: 'null' }], description: 'The first archived point with a price.' },
    closing: { oneOf: [{ $ref: '#/components/schemas/ArchivePricePoint' }, { type: 'null' }], description: "The point in force just before the event's start; null when the row was removed or unpriced then." },
    noVigProbability: { type: ['number', 'null'], description: 'Null unless the market group has 2 or 3 outcomes all priced at the close.' },
    noVigDecimal: { type: ['number', 'null'] },
  },
};

const ClosingLineValue: Schema = {
  type: 'object',
  description: 'Closing-line value of a price taken: raw against the close, and against the no-vig close.',
  required: ['id', 'takenAt', 'priceAmerican', 'takenDecimal', 'closingBook', 'closingId', 'eventStart', 'closing', 'closingDecimal', 'noVigClosingDecimal', 'devig', 'clv', 'clvNoVig'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$' },
    takenAt: dateTime('When the price was taken.'),
    priceAmerican: { type: 'integer', description: 'The American price taken.' },
    takenDecimal: { type: 'number' },
    closingBook: { type: 'string' },
    closingId: { type: 'string', description: 'The odds row whose close is the reference.' },
    eventStart: dateTime("The event's start (the close is the last price strictly before it)."),
    closing: { oneOf: [{ $ref: '#/components/schemas/ArchivePricePoint' }, { type: 'null' }] },
    closingDecimal: { type: ['number', 'null'] },
    noVigClosingDecimal: { type: ['number', 'null'] },
    devig: { type: 'string', enum: ['multiplicative', 'additive', 'power', 'shin', 'worst'] },
    clv: { type: ['number', 'null'], description: 'takenDecimal / closingDecimal - 1.' },
    clvNoVig: { type: ['number', 'null'], description: 'takenDecimal / noVigClosingDecimal - 1.' },
  },
};

const ArchiveRow: Schema = {
  type: 'object',
  description: 'A row of the tick archive\'s Parquet files (docs/archive.md): one accepted change.',
  properties: Object.fromEntries([...ARCHIVE_COLUMNS, EVENT_KEY_COLUMN].map((c) => [c.name, { type: c.type === 'VARCHAR' ? ['string', 'null'] : c.type === 'BOOLEAN' ? ['boolean', 'null'] : c.type === 'DOUBLE' ? ['number', 'null'] : ['integer', 'null'], description: c.doc }])),
};

const AccountUsage: Schema = {
  type: 'object',
  description: 'The calling key\'s plan and usage. Anonymous callers: plan ENTERPRISE and every other field null. Never errors.',
  required: ['plan', 'monthlyUsed', 'monthlyCap', 'rateLimitPerMinute', 'key'],
  additionalProperties: false,
  properties: {
    plan: { type: 'string', enum: ['FREE', 'PRO', 'ENTERPRISE'] },
    monthlyUsed: { type: ['integer', 'null'], minimum: 0 },
    monthlyCap: { type: ['integer', 'null'], minimum: 0 },
    rateLimitPerMinute: { type: ['integer', 'null'], minimum: 0 },
    key: { type: ['string', 'null'], description: 'Last 4 characters of the key.' },
  },
};

const PriceHistoryEntry: Schema = {
  type: 'object',
  description: 'fs/ls first- and last-seen (epoch seconds), pa American, pd decimal, dm DFS multiplier, su true on a suspended span. Keys absent when not applicable.',
  required: ['fs', 'ls'],
  additionalProperties: false,
  properties: {
    fs: { type: 'integer', minimum: 0 },
    ls: { type: 'integer', minimum: 0 },
    pa: { type: 'integer' },
    pd: { type: 'number' },
    dm: { type: 'number' },
    su: { const: true },
  },
};

const SnapshotOddsRow: Schema = {
  ...OddsRow,
  description: 'An odds row in the snapshot: OddsRow plus priceHistory (oldest first, at most 50; null without include_history=true).',
  required: [...(OddsRow.required as string[]), 'priceHistory'],
  properties: {
    ...(OddsRow.properties as Record<string, unknown>),
    priceHistory: { oneOf: [{ type: 'null' }, { type: 'array', maxItems: 50, items: { $ref: '#/components/schemas/PriceHistoryEntry' } }] },
  },
};

const Snapshot: Schema = {
  type: 'object',
  description: 'The full live board, gzip JSON, not the envelope. syncToken is the since for the next /odds/updated poll.',
  required: ['updated', 'syncToken', 'count', 'events'],
  additionalProperties: false,
  properties: {
    updated: dateTime('Board as-of time.'),
    syncToken: { type: 'string' },
    count: { type: 'integer', minimum: 0, description: 'Odds rows in the snapshot.' },
    events: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'league', 'startTime', 'status', 'homeTeamId', 'awayTeamId', 'odds'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: ID },
          league: { type: 'string', pattern: CODE },
          startTime: { type: 'string', pattern: MINUTE_Z },
          status: EVENT_STATUS,
          homeTeamId: nullableString,
          awayTeamId: nullableString,
          odds: { type: 'array', items: { $ref: '#/components/schemas/SnapshotOddsRow' } },
        },
      },
    },
  },
};

const League: Schema = { type: 'string', pattern: CODE, description: 'A league code, lower case.' };

const OpenApiDocument: Schema = { type: 'object', required: ['openapi', 'info', 'paths'], description: 'This document.' };

export const COMPONENT_SCHEMAS: Readonly<Record<string, Schema>> = {
  Envelope,
  Error: ErrorSchema,
  OddsRow,
  Team,
  Player,
  Sportsbook,
  MarketType,
  Status,
  League,
  Event,
  EventDetail,
  Season,
  TeamBoxRow,
  PlayerBoxRow,
  EventBoxScore,
  Edge,
  ArbitrageLeg,
  Arbitrage,
  FlaggedBook,
  FairOutcome,
  WeightedBook,
  FairLine,
  BestOutcome,
  BestPrice,
  PositiveEv,
  MiddleLeg,
  Middle,
  StaleBook,
  SteamMove,
  HistoricalOddsRow,
  SelectionHistoryRow,
  ArchivePricePoint,
  ClosingLine,
  ClosingLineValue,
  ArchiveRow,
  AccountUsage,
  PriceHistoryEntry,
  SnapshotOddsRow,
  Snapshot,
  OpenApiDocument,
};
