// Declarative query parameters and the JSON Schema each one maps to.
// The same schema drives the ajv validator compiled at start-up (params.ts) and the
// parameter's description in the OpenAPI document (openapi.ts), so the constraints a
// client reads are exactly the ones enforced.

export type Casing = 'lower' | 'upper';

interface ParamCommon {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
}

/** Free text; `case` normalizes it. */
export interface StringParam extends ParamCommon {
  readonly kind: 'string';
  readonly case?: Casing;
  readonly maxLength?: number;
  readonly default?: string;
  /** A regular expression the whole value must match (else 400 invalid_parameter); the OpenAPI schema carries it. */
  readonly pattern?: string;
  /** What the pattern means, for the 400's detail: 'an odds id: {eventId}:{sportsbook}:{marketSubtype}:{selectionId}'. */
  readonly patternText?: string;
}

/** Comma-separated tokens, any-of: at most maxItems (default 20) after dropping empty tokens. */
export interface ListParam extends ParamCommon {
  readonly kind: 'list';
  readonly case?: Casing;
  readonly maxItems?: number;
}

/** A closed set: a bad value answers 400 invalid_parameter with validValues. Matched exactly. */
export interface EnumParam extends ParamCommon {
  readonly kind: 'enum';
  readonly values: readonly string[];
  readonly default?: string;
}

/** true/false/1/0, case-insensitive; anything else is 400. */
export interface BooleanParam extends ParamCommon {
  readonly kind: 'boolean';
  readonly default?: boolean;
}

export interface IntegerParam extends ParamCommon {
  readonly kind: 'integer';
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}

export interface NumberParam extends ParamCommon {
  readonly kind: 'number';
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}

/** ISO-8601 instant or epoch milliseconds (digits only); parsed to epoch ms. */
export interface InstantParam extends ParamCommon {
  readonly kind: 'instant';
  readonly default?: number;
}

export type ParamDef = StringParam | ListParam | EnumParam | BooleanParam | IntegerParam | NumberParam | InstantParam;

type ValueOf<D> = D extends { kind: 'list' }
  ? string[]
  : D extends { kind: 'boolean' }
    ? boolean
    : D extends { kind: 'integer' | 'number' | 'instant' }
      ? number
      : D extends { kind: 'enum'; values: readonly (infer V)[] }
        ? V
        : string;

type AlwaysPresent<D> = D extends { required: true } ? true : D extends { default: unknown } ? true : false;

/** The typed query object a route receives for its parameter list. */
export type QueryOf<Ds extends readonly ParamDef[]> = {
  [D in Ds[number] as D['name']]: AlwaysPresent<D> extends true ? ValueOf<D> : ValueOf<D> | undefined;
};

/** Parameters most routes share (cursor; limit 1..1000, default 100). */
export const COMMON_PARAMS = {
  limit: {
    name: 'limit',
    kind: 'integer',
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: 'Page size, 1..1000 (default 100). Outside that range: 400 invalid_parameter.',
  },
  cursor: {
    name: 'cursor',
    kind: 'string',
    maxLength: 2048,
    description: 'Opaque keyset cursor from a previous page\'s nextCursor, passed back verbatim. It is bound to the filters of the walk: replaying it with different filters answers 400 invalid_cursor.',
  },
} as const satisfies Record<string, ParamDef>;

/**
 * Exactly the text params.ts parseInstantParam accepts (test/http/openapi-schemas.test.ts
 * checks both ways): epoch milliseconds of at most 16 digits, or a date that exists
 * (leap years included) with an optional time (T or a space; hours 00-23, minutes and
 * seconds 00-59, up to 9 fraction digits) and zone (Z or an offset up to ±23:59).
 */
const LEAP_YEAR = '(?:\\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)';
const MONTH_DAY = '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))';
const TIME = '[T ](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?(?:[Zz]|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)?';
export const ISO_INSTANT_PATTERN = `^(?:(?:\\d{4}-${MONTH_DAY}|${LEAP_YEAR}-02-29)(?:${TIME})?|\\d{1,16})$`;

/**
 * The JSON Schema of the parameter's parsed value (what ajv validates after coercion).
 * wire: true gives the schema OpenAPI shows: instants as the text they are sent as.
 */
export function paramSchema(def: ParamDef, wire = false): Record<string, unknown> {
  switch (def.kind) {
    case 'string':
      return withDefault(
        { type: 'string', minLength: 1, ...(def.maxLength !== undefined && { maxLength: def.maxLength }), ...(def.pattern !== undefined && { pattern: def.pattern }) },
        def.default,
      );
    case 'list':
      return { type: 'array', maxItems: def.maxItems ?? 20, items: { type: 'string', minLength: 1 } };
    case 'enum':
      return withDefault({ type: 'string', enum: [...def.values] }, def.default);
    case 'boolean':
      return withDefault({ type: 'boolean' }, def.default);
    case 'integer':
    case 'number':
      return withDefault(
        {
          type: def.kind,
          ...(def.minimum !== undefined && { minimum: def.minimum }),
          ...(def.maximum !== undefined && { maximum: def.maximum }),
        },
        def.default,
      );
    case 'instant':
      return wire ? { type: 'string', pattern: ISO_INSTANT_PATTERN } : { type: 'number' };
  }
}

function withDefault(schema: Record<string, unknown>, value: unknown): Record<string, unknown> {
  if (value !== undefined) schema.default = value;
  return schema;
}

/** The human sentence naming a parameter's constraint; used in 400 details. */
export function constraintSentence(def: ParamDef): string {
  switch (def.kind) {
    case 'string':
      if (def.patternText !== undefined) return `${def.name} must be ${def.patternText}${def.maxLength === undefined ? '' : ` of at most ${def.maxLength} characters`}`;
      return def.maxLength === undefined ? `${def.name} must be a non-empty string` : `${def.name} must be a string of at most ${def.maxLength} characters`;
    case 'list':
      return `${def.name} accepts at most ${def.maxItems ?? 20} comma-separated values`;
    case 'enum':
      return `${def.name} must be one of ${def.values.join(', ')}`;
    case 'boolean':
      return `${def.name} must be true, false, 1 or 0`;
    case 'integer':
      return `${def.name} must be an integer${rangeText(def.minimum, def.maximum)}`;
    case 'number':
      return `${def.name} must be a number${rangeText(def.minimum, def.maximum)}`;
    case 'instant':
      return `${def.name} must be an ISO-8601 instant (e.g. 2026-11-21T12:00:00Z) or epoch milliseconds`;
  }
}

function rangeText(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` in [${min}, ${max}]`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}
