// An odds row as JSON (the OpenAPI OddsRow record), in two renderers that must agree byte for byte:
// rowObject() walks the row's field table (engine/rowFields.ts: the order, and when each
// field is present) into a plain object for JSON.stringify (the reference, also used by
// tests and small callers), and rowJsonText() concatenates cached JSON-escaped pool
// strings in the same order (the fast path that fills the fragment cache; no per-field
// dispatch). Prices follow odds_format (none on DFS rows); "removed": true on tombstones.

import { americanToDecimal } from './model.ts';
import { JSON_FIELDS } from './rowFields.ts';
import { isoMillis, isoMinutes } from './timeFormat.ts';
import {
  NONE,
  NO_PRICE,
  SCOPES,
  SIDES,
  SLOT_TOMBSTONE,
  TEAM_SIDES,
  type OddsStore,
} from './oddsStore.ts';

export type OddsFormat = 'all' | 'american' | 'decimal' | 'probability';
export const ODDS_FORMATS: readonly OddsFormat[] = ['all', 'american', 'decimal', 'probability'];
export const FORMAT_ALL = 0;
const FORMAT_AMERICAN = 1;
const FORMAT_DECIMAL = 2;
const FORMAT_PROBABILITY = 3;

export function formatCode(format: OddsFormat): number {
  const code = ODDS_FORMATS.indexOf(format);
  if (code < 0) throw new Error(`unknown odds format ${String(format)}`);
  return code;
}

/** priceProbability: 1/decimal rounded to 4 places (odds_format=probability). */
function impliedProbability(american: number): number {
  return Math.round((1 / americanToDecimal(american)) * 10000) / 10000;
}

/** JSON.stringify of a number. */
function num(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** The row as a plain object, field by field as engine/rowFields.ts lists them (the reference renderer). */
export function rowObject(store: OddsStore, slot: number, format: OddsFormat): Record<string, unknown> {
  const s = store;
  const code = formatCode(format);
  const american = s.priceAmerican[slot];
  const priced = Number.isNaN(s.dfsMultiplier[slot]) && american !== NO_PRICE;
  const row: Record<string, unknown> = {};
  for (const field of JSON_FIELDS) {
    switch (field.kind) {
      case 'id':
        row[field.name] = s.idOf(slot);
        break;
      case 'price':
        if (priced && (code === FORMAT_ALL || code === FORMAT_AMERICAN)) row[field.name] = american;
        break;
      case 'decimal':
        if (priced && (code === FORMAT_ALL || code === FORMAT_DECIMAL)) row[field.name] = americanToDecimal(american);
        break;
      case 'probability':
        if (priced && code === FORMAT_PROBABILITY) row[field.name] = impliedProbability(american);
        break;
      case 'minute':
        row[field.name] = isoMinutes(s.fieldValue(field, slot) as number);
        break;
      case 'instant':
        row[field.name] = isoMillis(s.fieldValue(field, slot) as number);
        break;
      case 'removed':
        if (s.state[slot] === SLOT_TOMBSTONE) row[field.name] = true;
        break;
      default: {
        const value = s.fieldValue(field, slot);
        if (value !== null) row[field.name] = value;
      }
    }
  }
  return row;
}

const SIDE_JSON = SIDES.map((side) => `,"side":"${side}"`);
const TEAM_SIDE_JSON = TEAM_SIDES.map((teamSide) => `,"teamSide":"${teamSide}"`);
const SCOPE_JSON = SCOPES.map((scope) => (scope === null ? '' : `,"marketScope":"${scope}"`));

/** The same JSON as JSON.stringify(rowObject(...)), built from cached pieces. */
export function rowJsonText(store: OddsStore, slot: number, code: number): string {
  const s = store;
  let text =
    '{"id":' +
    JSON.stringify(s.idOf(slot)) +
    ',"sportsbook":' +
    s.books.json(s.book[slot]) +
    ',"league":' +
    s.leagues.json(s.league[slot]) +
    ',"eventId":' +
    s.events.json(s.event[slot]) +
    ',"market":' +
    s.markets.json(s.market[slot]) +
    ',"marketSubtype":' +
    s.subtypes.json(s.subtype[slot]) +
    ',"period":' +
    s.periods.json(s.period[slot]) +
    ',"selection":' +
    s.labels.json(s.selection[slot]) +
    SIDE_JSON[s.side[slot]] +
    TEAM_SIDE_JSON[s.teamSide[slot]] +
    ',"teamName":' +
    s.labels.json(s.teamName[slot]);
  const dfs = s.dfsMultiplier[slot];
  const american = s.priceAmerican[slot];
  if (dfs !== dfs && american !== NO_PRICE) {
    if (code === FORMAT_ALL) text += ',"priceAmerican":' + american + ',"priceDecimal":' + num(americanToDecimal(american));
    else if (code === FORMAT_AMERICAN) text += ',"priceAmerican":' + american;
    else if (code === FORMAT_DECIMAL) text += ',"priceDecimal":' + num(americanToDecimal(american));
    else text += ',"priceProbability":' + num(impliedProbability(american));
  }
  const line = s.line[slot];
  if (line === line) text += ',"line":' + num(line);
  if (dfs === dfs) text += ',"dfsMultiplier":' + num(dfs);
  if (s.player[slot] !== NONE) text += ',"playerId":' + s.players.json(s.player[slot]);
  if (s.playerName[slot] !== NONE) text += ',"playerName":' + s.labels.json(s.playerName[slot]);
  text +=
    (s.suspended[slot] === 1 ? ',"suspended":true' : ',"suspended":false') +
    ',"eventStartTime":"' +
    isoMinutes(s.eventStartTime[slot]) +
    '","updated":"' +
    isoMillis(s.updated[slot]) +
    '"' +
    SCOPE_JSON[s.scope[slot]];
  if (s.segment[slot] !== NONE) text += ',"segment":' + s.labels.json(s.segment[slot]);
  return s.state[slot] === SLOT_TOMBSTONE ? text + ',"removed":true}' : text + '}';
}
