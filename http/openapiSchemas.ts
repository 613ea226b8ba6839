// Shared OpenAPI 3.1 component schemas (JSON Schema 2020-12). Response bodies are
// validated against these in tests, so they state the presence rules exactly, and
// they carry in their descriptions the choices service-spec leaves open (decisions.md).

type Schema = Record<string, unknown>;

const ISO_MILLIS = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';
const MINUTE_NO_ZONE = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$';
const CODE = '^[a-z0-9_]+$';
const UPPER_SNAKE = '^[A-Z0-9_]+$';
const ID = '^[^:\\s]+$';

const dateTime = (description: string): Schema => ({ type: 'string', format: 'date-time', pattern: ISO_MILLIS, description });
const int32 = (description: string, minimum?: number): Schema => ({ type: 'integer', format: 'int32', ...(minimum !== undefined && { minimum }), description });

export const ERROR_CODES = [
  'invalid_parameter',
  'missing_parameter',
  'invalid_cursor',
  'not_found',
  'method_not_allowed',
  'invalid_api_key',
  'missing_api_key',
  'rate_limited',
  'internal_error',
] as const;

const Envelope: Schema = {
  type: 'object',
  description: 'The response envelope of every JSON endpoint except the snapshot (service-spec 2.1). Single-item lookups also return an array.',
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
          'On /odds/updated: the board as-of time when the walk\'s first page was read (pass it as the next since). Elsewhere: the latest updated among the page rows, or when their source data last changed (decisions C7).',
        ),
        note: { type: 'string', description: 'Explanations such as an out-of-season league (200 with empty data) or a since older than the tombstone horizon.' },
        warnings: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'Present only when something was ignored, e.g. unknown query parameters (decisions B).',
        },
      },
    },
  },
};

const ErrorSchema: Schema = {
  type: 'object',
  description:
    'Every error body (decisions B). 400 invalid_parameter | missing_parameter | invalid_cursor; 401 invalid_api_key | missing_api_key; 404 not_found; 405 method_not_allowed; 429 rate_limited (with Retry-After); 500 internal_error (detail carries a request id, also in X-Request-Id).',
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

const OddsRow: Schema = {
  type: 'object',
  description:
    'One price at one book (service-spec 2.8). Presence rules: priceAmerican/priceDecimal per odds_format (all: both; american or decimal: that one; probability: neither, priceProbability instead); DFS pick\'em rows carry dfsMultiplier and no price fields; line is absent on pure moneylines and categorical futures; playerId and playerName only on player props; marketScope only on futures, segment only on segment-scoped futures; removed: true only on delta-feed tombstones (decisions F3).',
  required: ['id', 'sportsbook', 'league', 'eventId', 'market', 'marketSubtype', 'period', 'selection', 'side', 'teamSide', 'teamName', 'suspended', 'eventStartTime', 'updated'],
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$',
      description: 'Stable composite key {eventId}:{sportsbook}:{marketSubtype}:{selectionId}; selectionId encodes period, side, line and player/team, so a price move never changes it (decisions A3). Upsert on it.',
    },
    sportsbook: { type: 'string', pattern: CODE, description: 'Source id, lower case.' },
    league: { type: 'string', pattern: CODE, description: 'League code, lower case.' },
    eventId: { type: 'string', pattern: ID },
    market: { type: 'string', pattern: UPPER_SNAKE, description: 'Market family, e.g. MONEYLINE, SPREAD, TOTAL, PLAYER_TOTAL, CATEGORICAL.' },
    marketSubtype: { type: 'string', pattern: UPPER_SNAKE, description: 'Specific stat or variant; equals market for simple markets.' },
    period: { type: 'string', pattern: UPPER_SNAKE, description: 'FULL, sport partials such as 1INN; futures REG_SEASON or FULL.' },
    selection: { type: 'string', description: 'Human label; do not parse it.' },
    side: { type: 'string', enum: ['HOME', 'AWAY', 'DRAW', 'OVER', 'UNDER', 'YES'] },
    teamSide: { type: 'string', enum: ['HOME', 'AWAY', 'NONE'] },
    teamName: { type: 'string', description: 'Display label; differs between books.' },
    priceAmerican: { type: 'integer', format: 'int32', not: { exclusiveMinimum: -100, exclusiveMaximum: 100 } },
    priceDecimal: { type: 'number', exclusiveMinimum: 1 },
    priceProbability: { type: 'number', minimum: 0, maximum: 1, description: '1/priceDecimal rounded to 4 places; only with odds_format=probability.' },
    line: { type: 'number', description: 'Handicap or total.' },
    dfsMultiplier: { type: 'number', exclusiveMinimum: 0, description: 'DFS pick\'em payout multiplier, instead of prices.' },
    playerId: { type: 'string', pattern: ID },
    playerName: { type: 'string' },
    suspended: { type: 'boolean', description: 'true while the book has the line locked.' },
    eventStartTime: {
      type: 'string',
      pattern: MINUTE_NO_ZONE,
      description: 'UTC, minute precision, no seconds or zone (decisions A1). On futures: the season anchor\'s settlement date.',
    },
    updated: dateTime('When the line last refreshed (UTC, milliseconds). /odds/updated compares since against it.'),
    marketScope: { type: 'string', enum: ['SEASON', 'TOURNAMENT'], description: 'Present only on futures.' },
    segment: { type: 'string', description: 'Slice of a future (division, conference, league); only on segment-scoped futures.' },
    removed: { const: true, description: 'Tombstone in the delta feed: the selection left the board; delete it by id.' },
  },
  dependentRequired: { playerId: ['playerName'], playerName: ['playerId'], segment: ['marketScope'] },
  dependentSchemas: {
    priceProbability: { not: { anyOf: PRICE_FIELDS.map((field) => ({ required: [field] })) } },
    dfsMultiplier: { not: { anyOf: [...PRICE_FIELDS, 'priceProbability'].map((field) => ({ required: [field] })) } },
  },
};

const Team: Schema = {
  type: 'object',
  description: 'service-spec 2.2. conference and division are additions (null where a league has none).',
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
  description: 'service-spec 2.3.',
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
  description: 'service-spec 2.4 (also DFS sources). marketCount counts live odds rows of the source, suspended included, tombstones excluded (decisions D9). name and kind are additions.',
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
  description: 'service-spec 2.5. /markets aggregates across subtypes and omits marketSubtype; /markets/active lists (marketType, marketSubtype) pairs. liveCount counts live odds rows (decisions D9).',
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
  description: 'service-spec 2.6. totalMarkets = live odds rows (suspended included, tombstones excluded) = sum of marketCount over sportsbooks; sportsbooks = sources with live rows (decisions D9).',
  required: ['totalMarkets', 'sportsbooks'],
  additionalProperties: false,
  properties: {
    totalMarkets: int32('Live odds rows on the board.', 0),
    sportsbooks: int32('Sources with at least one live row.', 0),
  },
};

const League: Schema = { type: 'string', pattern: CODE, description: 'A league code (service-spec 2.7), lower case.' };

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
  OpenApiDocument,
};
