// The odds row's fields, once: for each, its name, its type, the OddsStore column that
// holds it and how (a pooled string, an enum code, a number with a null sentinel...), its
// JSON key and when a row carries it, its schema in the served OpenAPI OddsRow, and its
// schema in the ingest change `odds` (with its place there: ajv reports a row's problems
// in that order, so it is kept). Derived from it, at module load: OddsStore.rowInput,
// rowObject (engine/rowJson.ts), the columns of /historical/odds (signals/
// historicalReplay.ts), the OpenAPI OddsRow (http/openapiSchemas.ts) and the ingest row
// schema (ingest/changes.ts). rowJsonText, the hot renderer, is written out by hand and
// kept byte-equal to rowObject by test/engine/render.test.ts.
//
// The table is in the row's JSON order (the order of the OpenAPI properties too).

import { MARKET_SCOPES, SIDES, TEAM_SIDES } from './model.ts';

type Schema = Record<string, unknown>;

/**
 * How a field is read from its column:
 *   id        built from event, book, subtype and selectionId (not stored)
 *   string    a pooled string id (never null)
 *   ref       a pooled string id, NONE (-1) for null
 *   enum      an index into `values`
 *   price     priceAmerican, NO_PRICE (0) for null; the JSON prices follow odds_format
 *   decimal   priceDecimal: derived from priceAmerican (JSON only)
 *   probability priceProbability: derived from priceAmerican (JSON only, odds_format=probability)
 *   number    a float, NaN for null
 *   bool      1 for true
 *   minute    epoch ms, in JSON 'YYYY-MM-DDTHH:mm'
 *   instant   epoch ms, in JSON ISO with milliseconds
 *   scope     0 for none (an event row), then `values` from index 1
 *   removed   the slot state: true on a tombstone (JSON only)
 */
export type FieldKind = 'id' | 'string' | 'ref' | 'enum' | 'price' | 'decimal' | 'probability' | 'number' | 'bool' | 'minute' | 'instant' | 'scope' | 'removed';

/** The OddsStore columns a field can live in, and the pools its strings are interned in. */
export type RowColumn =
  | 'event' | 'book' | 'league' | 'market' | 'subtype' | 'period' | 'selectionId' | 'selection' | 'side' | 'teamSide' | 'teamName'
  | 'priceAmerican' | 'dfsMultiplier' | 'line' | 'player' | 'playerName' | 'team' | 'suspended' | 'eventStartTime' | 'updated' | 'scope' | 'segment' | 'state';
export type RowPool = 'events' | 'books' | 'leagues' | 'markets' | 'subtypes' | 'periods' | 'selectionIds' | 'labels' | 'players' | 'teams';

export interface RowField {
  /** The JSON key, and the OddsInput key where the field is an input. */
  name: string;
  /** Its TypeScript type in OddsInput (or in the JSON row when it is derived). */
  type: string;
  kind: FieldKind;
  column: RowColumn | null;
  pool?: RowPool;
  values?: readonly string[];
  /** Part of OddsInput (what ingest takes and OddsStore.writeRow stores). */
  input: boolean;
  /** In the served row (OpenAPI OddsRow) with this schema; required there when `required`. */
  openapi: { schema: Schema; required: boolean } | null;
  /** In the ingest change's row with this schema, at place `at`; required there when `required`. */
  ingest: { at: number; schema: Schema; required: boolean } | null;
}

/** Patterns of the served records (the OpenAPI document; http/openapiSchemas.ts uses them for every record). */
export const SERVED_PATTERNS = {
  CODE: '^[a-z0-9_]+$',
  UPPER_SNAKE: '^[A-Z0-9_]+$',
  ID: '^[^:\\s]+$',
  ISO_MILLIS: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  MINUTE_NO_ZONE: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$',
} as const;

/** What ingest accepts (ingest/changes.ts uses them for every change): ids are URL-safe, codes lower case. */
export const INGEST_PATTERNS = {
  ID: '^[A-Za-z0-9._~-]+$',
  CODE: '^[a-z0-9_]+$',
  UPPER_SNAKE: '^[A-Z0-9]+(_[A-Z0-9]+)*$',
  ODDS_ID: '^[^:]+:[^:]+:[^:]+:[^:]+$',
  INSTANT: { anyOf: [{ type: 'string', minLength: 1, maxLength: 40 }, { type: 'integer', minimum: 0 }] },
  TEXT: { type: 'string', minLength: 1, maxLength: 200 },
} as const;

const { CODE: SERVED_CODE, UPPER_SNAKE: SERVED_UPPER_SNAKE, ID: SERVED_ID, ISO_MILLIS: SERVED_ISO_MILLIS, MINUTE_NO_ZONE: SERVED_MINUTE_NO_ZONE } = SERVED_PATTERNS;
const { ID: INGEST_ID, CODE: INGEST_CODE, UPPER_SNAKE: INGEST_UPPER_SNAKE, ODDS_ID, INSTANT: INGEST_INSTANT, TEXT: INGEST_TEXT } = INGEST_PATTERNS;
/** A schema that also takes null (ingest). */
export const nullable = (schema: object): Schema => ({ anyOf: [schema, { type: 'null' }] });
const finite = { type: 'number' };

const served = (schema: Schema, required = false) => ({ schema, required });
const ingested = (at: number, schema: Schema, required = false) => ({ at, schema, required });

export const ROW_FIELDS: readonly RowField[] = [
  {
    name: 'id', type: 'string', kind: 'id', column: null, input: false,
    openapi: served({ type: 'string', pattern: ODDS_ID, description: 'Stable composite key {eventId}:{sportsbook}:{marketSubtype}:{selectionId}; selectionId encodes period, side, line and player/team, so a price move never changes it. Upsert on it.' }, true),
    ingest: ingested(0, { type: 'string', pattern: ODDS_ID, maxLength: 400 }, true),
  },
  {
    name: 'sportsbook', type: 'string', kind: 'string', column: 'book', pool: 'books', input: true,
    openapi: served({ type: 'string', pattern: SERVED_CODE, description: 'Source id, lower case.' }, true),
    ingest: ingested(2, { type: 'string', pattern: INGEST_CODE, maxLength: 50 }, true),
  },
  {
    name: 'league', type: 'string', kind: 'string', column: 'league', pool: 'leagues', input: true,
    openapi: served({ type: 'string', pattern: SERVED_CODE, description: 'League code, lower case.' }, true),
    ingest: ingested(3, { type: 'string', pattern: INGEST_CODE, maxLength: 50 }, true),
  },
  {
    name: 'eventId', type: 'string', kind: 'string', column: 'event', pool: 'events', input: true,
    openapi: served({ type: 'string', pattern: SERVED_ID }, true),
    ingest: ingested(1, { type: 'string', pattern: INGEST_ID, maxLength: 100 }, true),
  },
  {
    name: 'market', type: 'string', kind: 'string', column: 'market', pool: 'markets', input: true,
    openapi: served({ type: 'string', pattern: SERVED_UPPER_SNAKE, description: 'Market family, e.g. MONEYLINE, SPREAD, TOTAL, PLAYER_TOTAL, CATEGORICAL.' }, true),
    ingest: ingested(4, { type: 'string', pattern: INGEST_UPPER_SNAKE, maxLength: 100 }, true),
  },
  {
    name: 'marketSubtype', type: 'string', kind: 'string', column: 'subtype', pool: 'subtypes', input: true,
    openapi: served({ type: 'string', pattern: SERVED_UPPER_SNAKE, description: 'Specific stat or variant; equals market for simple markets.' }, true),
    ingest: ingested(5, { type: 'string', pattern: INGEST_UPPER_SNAKE, maxLength: 100 }, true),
  },
  {
    name: 'period', type: 'string', kind: 'string', column: 'period', pool: 'periods', input: true,
    openapi: served({ type: 'string', pattern: SERVED_UPPER_SNAKE, description: 'FULL, sport partials such as 1INN; futures REG_SEASON or FULL.' }, true),
    ingest: ingested(6, { type: 'string', pattern: INGEST_UPPER_SNAKE, maxLength: 50 }, true),
  },
  {
    name: 'selectionId', type: 'string', kind: 'string', column: 'selectionId', pool: 'selectionIds', input: true,
    openapi: null,
    ingest: ingested(7, { type: 'string', pattern: INGEST_ID, maxLength: 200 }),
  },
  {
    name: 'selection', type: 'string', kind: 'string', column: 'selection', pool: 'labels', input: true,
    openapi: served({ type: 'string', description: 'Human label; do not parse it.' }, true),
    ingest: ingested(8, INGEST_TEXT, true),
  },
  {
    name: 'side', type: 'Side', kind: 'enum', column: 'side', values: SIDES, input: true,
    openapi: served({ type: 'string', enum: [...SIDES] }, true),
    ingest: ingested(9, { enum: [...SIDES] }, true),
  },
  {
    name: 'teamSide', type: 'TeamSide', kind: 'enum', column: 'teamSide', values: TEAM_SIDES, input: true,
    openapi: served({ type: 'string', enum: [...TEAM_SIDES] }, true),
    ingest: ingested(10, { enum: [...TEAM_SIDES] }, true),
  },
  {
    name: 'teamName', type: 'string', kind: 'string', column: 'teamName', pool: 'labels', input: true,
    openapi: served({ type: 'string', description: 'Display label; differs between books.' }, true),
    ingest: ingested(11, { type: 'string', maxLength: 200 }, true),
  },
  {
    name: 'priceAmerican', type: 'number | null', kind: 'price', column: 'priceAmerican', input: true,
    openapi: served({ type: 'integer', format: 'int32', not: { exclusiveMinimum: -100, exclusiveMaximum: 100 } }),
    ingest: ingested(12, nullable({ type: 'integer' })),
  },
  {
    name: 'priceDecimal', type: 'number', kind: 'decimal', column: null, input: false,
    openapi: served({ type: 'number', exclusiveMinimum: 1 }),
    ingest: ingested(13, nullable(finite)),
  },
  {
    name: 'priceProbability', type: 'number', kind: 'probability', column: null, input: false,
    openapi: served({ type: 'number', minimum: 0, maximum: 1, description: '1/priceDecimal rounded to 4 places; only with odds_format=probability.' }),
    ingest: ingested(22, finite),
  },
  {
    name: 'line', type: 'number | null', kind: 'number', column: 'line', input: true,
    openapi: served({ type: 'number', description: 'Handicap or total.' }),
    ingest: ingested(15, nullable(finite)),
  },
  {
    name: 'dfsMultiplier', type: 'number | null', kind: 'number', column: 'dfsMultiplier', input: true,
    openapi: served({ type: 'number', exclusiveMinimum: 0, description: 'DFS pick\'em payout multiplier, instead of prices.' }),
    ingest: ingested(14, nullable(finite)),
  },
  {
    name: 'playerId', type: 'string | null', kind: 'ref', column: 'player', pool: 'players', input: true,
    openapi: served({ type: 'string', pattern: SERVED_ID }),
    ingest: ingested(16, nullable({ type: 'string', pattern: INGEST_ID, maxLength: 100 })),
  },
  {
    name: 'playerName', type: 'string | null', kind: 'ref', column: 'playerName', pool: 'labels', input: true,
    openapi: served({ type: 'string' }),
    ingest: ingested(17, nullable(INGEST_TEXT)),
  },
  {
    name: 'teamId', type: 'string | null', kind: 'ref', column: 'team', pool: 'teams', input: true,
    openapi: null,
    ingest: ingested(18, nullable({ type: 'string', pattern: INGEST_ID, maxLength: 100 })),
  },
  {
    name: 'suspended', type: 'boolean', kind: 'bool', column: 'suspended', input: true,
    openapi: served({ type: 'boolean', description: 'true while the book has the line locked.' }, true),
    ingest: ingested(19, { type: 'boolean' }),
  },
  {
    name: 'eventStartTime', type: 'number', kind: 'minute', column: 'eventStartTime', input: true,
    openapi: served({ type: 'string', pattern: SERVED_MINUTE_NO_ZONE, description: 'UTC, minute precision, no seconds or zone. On futures: the season anchor\'s settlement date.' }, true),
    ingest: ingested(20, INGEST_INSTANT),
  },
  {
    name: 'updated', type: 'number', kind: 'instant', column: 'updated', input: true,
    openapi: served({ type: 'string', format: 'date-time', pattern: SERVED_ISO_MILLIS, description: 'When the line last refreshed (UTC, milliseconds). /odds/updated compares since against it.' }, true),
    ingest: ingested(21, INGEST_INSTANT),
  },
  {
    name: 'marketScope', type: 'MarketScope | null', kind: 'scope', column: 'scope', values: MARKET_SCOPES, input: true,
    openapi: served({ type: 'string', enum: [...MARKET_SCOPES], description: 'Present only on futures.' }),
    ingest: ingested(23, nullable({ enum: [...MARKET_SCOPES] })),
  },
  {
    name: 'segment', type: 'string | null', kind: 'ref', column: 'segment', pool: 'labels', input: true,
    openapi: served({ type: 'string', description: 'Slice of a future (division, conference, league); only on segment-scoped futures.' }),
    ingest: ingested(24, nullable(INGEST_TEXT)),
  },
  {
    name: 'removed', type: 'true', kind: 'removed', column: 'state', input: false,
    openapi: served({ const: true, description: 'Tombstone in the delta feed: the selection left the board; delete it by id.' }),
    ingest: null,
  },
];

/** The fields of OddsInput, in its order (the ingest schema's). */
export const INPUT_FIELDS: readonly RowField[] = ROW_FIELDS.filter((f) => f.input).sort((a, b) => a.ingest!.at - b.ingest!.at);

/** The fields of the served row, in JSON order. */
export const JSON_FIELDS: readonly RowField[] = ROW_FIELDS.filter((f) => f.openapi !== null);

/** The field named `name` (throws on a name the table does not have: a typo fails at load). */
export function rowField(name: string): RowField {
  const field = ROW_FIELDS.find((f) => f.name === name);
  if (field === undefined) throw new Error(`the odds row has no field ${name}`);
  return field;
}

/** OpenAPI OddsRow's `properties` and `required`. */
export function servedRowSchema(): { required: string[]; properties: Record<string, Schema> } {
  return {
    required: JSON_FIELDS.filter((f) => f.openapi!.required).map((f) => f.name),
    properties: Object.fromEntries(JSON_FIELDS.map((f) => [f.name, f.openapi!.schema])),
  };
}

/** The ingest change's row schema: `required` and `properties` in the ingest order. */
export function ingestRowSchema(): { required: string[]; properties: Record<string, Schema> } {
  const fields = ROW_FIELDS.filter((f) => f.ingest !== null).sort((a, b) => a.ingest!.at - b.ingest!.at);
  return {
    required: fields.filter((f) => f.ingest!.required).map((f) => f.name),
    properties: Object.fromEntries(fields.map((f) => [f.name, f.ingest!.schema])),
  };
}
