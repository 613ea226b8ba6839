// Query-string parsing for one route, compiled once at start-up: per parameter a
// coercer (text -> typed value, syntax errors) and one ajv validator over the typed
// object (ranges, enums, token counts, required). Unknown parameters are ignored and
// reported in meta.warnings, so typos are visible. A repeated parameter: the last one wins.
// An empty value (`league=`) counts as absent, so a default applies or a required
// parameter answers missing_parameter.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { constraintSentence, paramSchema, type ParamDef } from './schemas.ts';
import { invalidParameter, missingParameter, type HttpError } from './errors.ts';

export interface ParsedQuery {
  values: Record<string, unknown>;
  /** Sentences for meta.warnings, one per unknown parameter. */
  warnings: string[];
  /** Stable text identifying the normalized query (canonical cache key part). */
  canonical: string;
}

const ajv = new Ajv2020({ allErrors: false, strict: true });

/**
 * Parsed queries kept per raw query string: parsing is a pure function of the text,
 * and pollers repeat the same few strings, so a hot poll skips decoding, coercion and
 * ajv. Results are frozen because they are shared between requests.
 */
const MEMO_ENTRIES = 512;

export class QueryParser {
  readonly defs: readonly ParamDef[];
  private readonly byName: Map<string, ParamDef>;
  private readonly validate: ValidateFunction;
  private readonly memo = new Map<string, ParsedQuery>();

  constructor(defs: readonly ParamDef[]) {
    this.defs = defs;
    this.byName = new Map(defs.map((def) => [def.name, def]));
    if (this.byName.size !== defs.length) throw new Error(`duplicate parameter names in ${defs.map((d) => d.name).join(',')}`);
    const properties: Record<string, unknown> = {};
    for (const def of defs) properties[def.name] = paramSchema(def);
    const required = defs.filter((def) => def.required === true).map((def) => def.name);
    this.validate = ajv.compile({ type: 'object', properties, required });
  }

  parse(rawQuery: string): ParsedQuery {
    const known = this.memo.get(rawQuery);
    if (known !== undefined) return known;
    const parsed = this.parseUncached(rawQuery);
    if (this.memo.size >= MEMO_ENTRIES) this.memo.clear();
    this.memo.set(rawQuery, parsed);
    return parsed;
  }

  private parseUncached(rawQuery: string): ParsedQuery {
    const raw = new Map<string, string>();
    const unknown: string[] = [];
    splitQuery(rawQuery, raw, unknown, this.byName);
    const values: Record<string, unknown> = {};
    for (const def of this.defs) {
      const text = raw.get(def.name);
      const value = text === undefined || text === '' ? defaultOf(def) : coerce(def, text);
      if (value !== undefined) values[def.name] = Array.isArray(value) ? Object.freeze(value) : value;
    }
    if (!this.validate(values)) throw this.toHttpError(this.validate.errors?.[0]);
    unknown.sort();
    const warnings = unknown.map((name) => `unknown query parameter '${name}' ignored`);
    const canonical = unknown.length === 0 ? JSON.stringify(values) : `${JSON.stringify(values)}#${unknown.join('&')}`;
    return Object.freeze({ values: Object.freeze(values), warnings: Object.freeze(warnings) as string[], canonical });
  }

  private toHttpError(error: ErrorObject | undefined): HttpError {
    if (error?.keyword === 'required') {
      const name = String((error.params as { missingProperty: string }).missingProperty);
      return missingParameter(name);
    }
    const name = error?.instancePath.split('/')[1] ?? '';
    const def = this.byName.get(name);
    if (def === undefined) return invalidParameter(name, `invalid query parameter ${name}`);
    return invalidParameter(def.name, constraintSentence(def), def.kind === 'enum' ? def.values : undefined);
  }
}

function defaultOf(def: ParamDef): unknown {
  return def.kind === 'list' ? undefined : def.default;
}

function splitQuery(query: string, raw: Map<string, string>, unknown: string[], known: Map<string, ParamDef>): void {
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    if (end > start) {
      const eq = query.indexOf('=', start);
      const hasValue = eq !== -1 && eq < end;
      const name = decodeComponent(query.slice(start, hasValue ? eq : end), null);
      const value = hasValue ? decodeComponent(query.slice(eq + 1, end), name) : '';
      if (known.has(name)) raw.set(name, value);
      else if (name !== '' && !unknown.includes(name)) unknown.push(name);
    }
    start = end + 1;
  }
}

/** application/x-www-form-urlencoded decoding: '+' is a space, then percent-decoding. */
function decodeComponent(text: string, param: string | null): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    throw invalidParameter(param ?? spaced, `malformed percent-encoding in query parameter ${param ?? spaced}`);
  }
}

const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false };
const INTEGER_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Text -> typed value; a value of the wrong syntax is a 400 naming the constraint. */
function coerce(def: ParamDef, text: string): unknown {
  switch (def.kind) {
    case 'string':
      return applyCase(text, def.case);
    case 'list':
      return splitList(text, def.case);
    case 'enum':
      return text;
    case 'boolean': {
      const value = BOOLEAN_TEXT[text.toLowerCase()];
      if (value === undefined) throw invalidParameter(def.name, constraintSentence(def));
      return value;
    }
    case 'integer':
      if (!INTEGER_TEXT.test(text)) throw invalidParameter(def.name, constraintSentence(def));
      return Number(text);
    case 'number': {
      if (!NUMBER_TEXT.test(text)) throw invalidParameter(def.name, constraintSentence(def));
      return Number(text);
    }
    case 'instant': {
      const ms = parseInstantParam(text);
      if (ms === null) throw invalidParameter(def.name, constraintSentence(def));
      return ms;
    }
  }
}

function applyCase(text: string, casing: 'lower' | 'upper' | undefined): string {
  if (casing === 'lower') return text.toLowerCase();
  if (casing === 'upper') return text.toUpperCase();
  return text;
}

/** Tokens trimmed, empty tokens dropped ("nfl,,nba" is two tokens); [] counts as absent. */
function splitList(text: string, casing: 'lower' | 'upper' | undefined): string[] | undefined {
  const tokens: string[] = [];
  for (const token of text.split(',')) {
    const trimmed = token.trim();
    if (trimmed !== '') tokens.push(applyCase(trimmed, casing));
  }
  return tokens.length === 0 ? undefined : tokens;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;
const UNENCODED_PLUS_OFFSET = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}:?\d{2})$/;
const EPOCH_MILLIS = /^\d{1,16}$/;

/**
 * An instant: epoch milliseconds (digits only) or an ISO-8601 date/date-time. A date-time
 * without a zone is read as UTC. A '+' offset sent unencoded arrives as a space
 * ("12:00:00 01:00"), which is taken back as '+'.
 */
export function parseInstantParam(text: string): number | null {
  if (EPOCH_MILLIS.test(text)) return Number(text);
  const plus = UNENCODED_PLUS_OFFSET.exec(text);
  const match = ISO_INSTANT.exec(plus === null ? text : `${plus[1]}+${plus[2]}`);
  if (match === null) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = match;
  if (!isRealDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const ms = frac === '' ? '' : `.${frac.slice(0, 3).padEnd(3, '0')}`;
  const offset = zone === 'Z' || zone === 'z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const parsed = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${offset}`);
  return Number.isFinite(parsed) ? parsed : null;
}

/** Date.parse rolls 2026-02-30 over into March; refuse dates that do not exist. */
function isRealDate(year: number, month: number, day: number): boolean {
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999 (0000-02-29 exists, 1900-02-29 does not).
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
