// The change vocabulary a feed sends (one change per NDJSON line, or one element of a
// msgpack array), as TypeScript types and the JSON Schemas that check their shape.
// Fields follow the served records (the OpenAPI document's OddsRow, Event, Team,
// Player, Season and box-score rows): a feed may send a row as /odds serves it.
// Shape is checked here (ajv, compiled once); what depends on the board (a known
// event, a known id, a price range per source kind) is checked by validate.ts.

import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { EVENT_STATUSES, type EventStatus, type MarketScope, type Side, type SourceKind, type TeamSide } from '../engine/model.ts';
import { INGEST_PATTERNS, ingestRowSchema, nullable } from '../engine/rowFields.ts';

/** An odds row as /odds serves it; `id` is required, `updated` is the service's to set (ignored when sent). */
export interface OddsRowIn {
  id: string;
  eventId: string;
  sportsbook: string;
  league: string;
  market: string;
  marketSubtype: string;
  period: string;
  /** The id's fourth part; optional, but must agree with the id when sent. */
  selectionId?: string;
  selection: string;
  side: Side;
  teamSide: TeamSide;
  teamName: string;
  priceAmerican?: number | null;
  priceDecimal?: number | null;
  dfsMultiplier?: number | null;
  line?: number | null;
  playerId?: string | null;
  playerName?: string | null;
  /** The team the selection is about (not a served field; derived from the event or player when absent). */
  teamId?: string | null;
  suspended?: boolean;
  /** Must equal the event's start when sent ('YYYY-MM-DDTHH:MM' as served, or any ISO-8601 instant, or epoch ms). */
  eventStartTime?: string | number;
  updated?: string | number;
  marketScope?: MarketScope | null;
  segment?: string | null;
}

export interface EventIn {
  id: string;
  league: string;
  homeTeamId: string | null;
  homeTeamName: string | null;
  awayTeamId: string | null;
  awayTeamName: string | null;
  /** ISO-8601 or epoch ms, minute aligned. */
  startTime: string | number;
  status: EventStatus;
  venueId?: string | null;
  seasonYear: number;
  context?: Record<string, unknown>;
  /** Season anchors and tournaments: no teams, futures rows only. */
  isFutures?: boolean;
  hasOdds?: boolean;
}

export interface TeamBoxIn {
  teamId: string;
  homeScore: number;
  awayScore: number;
  result: number;
  stats: Record<string, unknown>;
}

export interface PlayerBoxIn {
  playerId: string;
  teamId: string;
  data: Record<string, unknown>;
}

export type IngestChange =
  | { op: 'odds'; row: OddsRowIn }
  | { op: 'price'; id: string; priceAmerican?: number | null; priceDecimal?: number; dfsMultiplier?: number; suspended?: boolean }
  | { op: 'remove'; id: string }
  | { op: 'event'; event: EventIn }
  | { op: 'status'; eventId: string; status: EventStatus }
  | { op: 'team'; team: { id: string; name: string; abbreviation: string; league: string; conference?: string | null; division?: string | null; venueId?: string | null } }
  | { op: 'player'; player: { id: string; name: string; league: string; teamId: string; position: string } }
  | {
      op: 'season';
      season: { id: string; league: string; year: number; name: string; startDate: string; endDate: string; status: 'upcoming' | 'in_progress' | 'completed'; futuresEventId?: string | null };
    }
  | { op: 'boxscore'; eventId: string; teams: TeamBoxIn[]; players: PlayerBoxIn[] }
  | { op: 'source'; source: { id: string; name: string; kind: SourceKind } };

export const CHANGE_OPS = ['odds', 'price', 'remove', 'event', 'status', 'team', 'player', 'season', 'boxscore', 'source'] as const;

/** One bad change of a batch (every one is reported, so a feed can fix them all at once). */
export interface ChangeError {
  index: number;
  code: string;
  field: string | null;
  detail: string;
}

// Patterns of what ingest accepts: engine/rowFields.ts (the row's field table) holds them.
const { ID, CODE, UPPER_SNAKE, ODDS_ID, INSTANT, TEXT } = INGEST_PATTERNS;
const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
const finite = { type: 'number' };

/** The row of an `odds` change, from the row's field table (engine/rowFields.ts). */
const INGEST_ROW = ingestRowSchema();
const ODDS_ROW = {
  type: 'object',
  required: INGEST_ROW.required,
  additionalProperties: false,
  properties: INGEST_ROW.properties,
};

const EVENT = {
  type: 'object',
  required: ['id', 'league', 'homeTeamId', 'homeTeamName', 'awayTeamId', 'awayTeamName', 'startTime', 'status', 'seasonYear'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: ID, maxLength: 100 },
    league: { type: 'string', pattern: CODE, maxLength: 50 },
    homeTeamId: nullable({ type: 'string', pattern: ID, maxLength: 100 }),
    homeTeamName: nullable(TEXT),
    awayTeamId: nullable({ type: 'string', pattern: ID, maxLength: 100 }),
    awayTeamName: nullable(TEXT),
    startTime: INSTANT,
    status: { enum: [...EVENT_STATUSES] },
    venueId: nullable({ type: 'string', pattern: ID, maxLength: 100 }),
    seasonYear: { type: 'integer', minimum: 1900, maximum: 2200 },
    context: { type: 'object' },
    isFutures: { type: 'boolean' },
    hasOdds: { type: 'boolean' },
  },
};

export const CHANGE_SCHEMAS: Record<(typeof CHANGE_OPS)[number], object> = {
  odds: { required: ['row'], properties: { op: { const: 'odds' }, row: ODDS_ROW } },
  price: {
    required: ['id'],
    properties: {
      op: { const: 'price' },
      id: { type: 'string', pattern: ODDS_ID, maxLength: 400 },
      priceAmerican: nullable({ type: 'integer' }),
      priceDecimal: finite,
      dfsMultiplier: finite,
      suspended: { type: 'boolean' },
    },
  },
  remove: { required: ['id'], properties: { op: { const: 'remove' }, id: { type: 'string', pattern: ODDS_ID, maxLength: 400 } } },
  event: { required: ['event'], properties: { op: { const: 'event' }, event: EVENT } },
  status: {
    required: ['eventId', 'status'],
    properties: { op: { const: 'status' }, eventId: { type: 'string', pattern: ID, maxLength: 100 }, status: { enum: [...EVENT_STATUSES] } },
  },
  team: {
    required: ['team'],
    properties: {
      op: { const: 'team' },
      team: {
        type: 'object',
        required: ['id', 'name', 'abbreviation', 'league'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: ID, maxLength: 100 },
          name: TEXT,
          abbreviation: { type: 'string', minLength: 1, maxLength: 20 },
          league: { type: 'string', pattern: CODE, maxLength: 50 },
          conference: nullable(TEXT),
          division: nullable(TEXT),
          venueId: nullable({ type: 'string', pattern: ID, maxLength: 100 }),
        },
      },
    },
  },
  player: {
    required: ['player'],
    properties: {
      op: { const: 'player' },
      player: {
        type: 'object',
        required: ['id', 'name', 'league', 'teamId', 'position'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: ID, maxLength: 100 },
          name: TEXT,
          league: { type: 'string', pattern: CODE, maxLength: 50 },
          teamId: { type: 'string', pattern: ID, maxLength: 100 },
          position: { type: 'string', maxLength: 20 },
        },
      },
    },
  },
  season: {
    required: ['season'],
    properties: {
      op: { const: 'season' },
      season: {
        type: 'object',
        required: ['id', 'league', 'year', 'name', 'startDate', 'endDate', 'status'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: ID, maxLength: 100 },
          league: { type: 'string', pattern: CODE, maxLength: 50 },
          year: { type: 'integer', minimum: 1900, maximum: 2200 },
          name: TEXT,
          startDate: { type: 'string', pattern: DATE },
          endDate: { type: 'string', pattern: DATE },
          status: { enum: ['upcoming', 'in_progress', 'completed'] },
          futuresEventId: nullable({ type: 'string', pattern: ID, maxLength: 100 }),
        },
      },
    },
  },
  boxscore: {
    required: ['eventId', 'teams', 'players'],
    properties: {
      op: { const: 'boxscore' },
      eventId: { type: 'string', pattern: ID, maxLength: 100 },
      teams: {
        type: 'array',
        maxItems: 2,
        items: {
          type: 'object',
          required: ['teamId', 'homeScore', 'awayScore', 'result', 'stats'],
          additionalProperties: false,
          properties: {
            teamId: { type: 'string', pattern: ID, maxLength: 100 },
            homeScore: { type: 'integer', minimum: 0 },
            awayScore: { type: 'integer', minimum: 0 },
            result: { enum: [-1, 0, 1] },
            stats: { type: 'object' },
          },
        },
      },
      players: {
        type: 'array',
        maxItems: 200,
        items: {
          type: 'object',
          required: ['playerId', 'teamId', 'data'],
          additionalProperties: false,
          properties: {
            playerId: { type: 'string', pattern: ID, maxLength: 100 },
            teamId: { type: 'string', pattern: ID, maxLength: 100 },
            data: { type: 'object' },
          },
        },
      },
    },
  },
  source: {
    required: ['source'],
    properties: {
      op: { const: 'source' },
      source: {
        type: 'object',
        required: ['id', 'name', 'kind'],
        additionalProperties: false,
        properties: { id: { type: 'string', pattern: CODE, maxLength: 50 }, name: TEXT, kind: { enum: ['sharp', 'retail', 'dfs'] } },
      },
    },
  },
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
const VALIDATORS = new Map<string, ValidateFunction>(
  CHANGE_OPS.map((op) => [op, ajv.compile({ type: 'object', additionalProperties: false, ...CHANGE_SCHEMAS[op], required: ['op', ...(CHANGE_SCHEMAS[op] as { required: string[] }).required] })]),
);

/** Shape errors of one change ([] when it is well formed). */
export function shapeErrors(change: unknown, index: number): ChangeError[] {
  if (change === null || typeof change !== 'object' || Array.isArray(change)) {
    return [{ index, code: 'invalid_change', field: null, detail: 'a change is a JSON object with an "op"' }];
  }
  const op = (change as { op?: unknown }).op;
  const validate = typeof op === 'string' ? VALIDATORS.get(op) : undefined;
  if (validate === undefined) {
    return [{ index, code: 'unknown_op', field: 'op', detail: `op must be one of ${CHANGE_OPS.join(', ')}` }];
  }
  if (validate(change)) return [];
  return dedupe((validate.errors ?? []).map((error) => toChangeError(error, index)));
}

function toChangeError(error: ErrorObject, index: number): ChangeError {
  let path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (error.keyword === 'required') path = path === '' ? String(error.params.missingProperty) : `${path}.${String(error.params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') path = path === '' ? String(error.params.additionalProperty) : `${path}.${String(error.params.additionalProperty)}`;
  const detail =
    error.keyword === 'additionalProperties'
      ? 'is not a field of this change'
      : error.keyword === 'enum'
        ? `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`
        : (error.message ?? 'is invalid');
  return { index, code: 'invalid_change', field: path === '' ? null : path, detail };
}

function dedupe(errors: ChangeError[]): ChangeError[] {
  const seen = new Set<string>();
  // anyOf reports each branch; one line per field is what a feed needs
  return errors.filter((e) => {
    const key = `${e.field}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
