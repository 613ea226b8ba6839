// Checks a whole batch against the board before anything is logged or applied, and
// turns it into the normalized changes a log record holds (record.ts). Each change is
// checked against the board as the earlier changes of the batch (and the batches still
// waiting for the log) leave it, so "an event, then odds on it" is one valid batch.
// Every bad change is reported as {index, code, field, detail}; a batch with any is
// refused whole. The rules are those of the served records: the OpenAPI row schemas
// and the row rules of test/helpers/validateRow.ts (ids, market families and sides, lines,
// price ranges per source kind, player attribution).

import { isAllowedTransition } from '../engine/eventTable.ts';
import { americanToDecimal, decimalToAmerican, oddsId, type EventRecord, type OddsInput, type PlayerBoxRow, type SourceKind, type TeamBoxRow } from '../engine/model.ts';
import { BoardView, PendingEffects } from './boardView.ts';
import { shapeErrors, type ChangeError, type EventIn, type IngestChange, type OddsRowIn } from './changes.ts';
import { MAX_LISTED_BAD_CHANGES, UNDECODED } from './decode.ts';
import type { LoggedChange } from './record.ts';

/**
 * How deep a change may nest (objects and arrays inside each other). The served
 * records nest a few levels; a deeper change is refused whole (too_deep) before any
 * code walks it recursively (the schema check, the record encoder), which a change
 * 20,000 levels deep would otherwise overflow the stack of.
 */
export const MAX_CHANGE_DEPTH = 32;

/** True when `value` nests objects or arrays deeper than `limit` levels (iterative: never deeper than the value itself). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: { value: object; depth: number }[] = [{ value: value as object, depth: 1 }];
  while (stack.length > 0) {
    const { value: at, depth } = stack.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(at) ? at : Object.values(at);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ value: child as object, depth: depth + 1 });
  }
  return false;
}

export interface ValidatedBatch {
  changes: LoggedChange[];
  /** The errors of the first MAX_LISTED_BAD_CHANGES bad changes (decode.ts). */
  errors: ChangeError[];
  /** Bad changes in all (errors words the first of them; UNDECODED ones are the decoder's to count). */
  badChanges: number;
  /** What the batch does to the board, for the batches validated after it. */
  effects: PendingEffects;
  /**
   * Per entry of `changes`: the slot of the row a price tick moves, when validation
   * found it on the engine alone (no pending batch touches rows), else -1. Valid for
   * the apply that follows while nothing but the pending batches changes the board.
   */
  slots: number[];
}

const SIDES: Record<string, readonly string[]> = {
  MONEYLINE: ['HOME', 'AWAY'],
  MONEYLINE_3_WAY: ['HOME', 'DRAW', 'AWAY'],
  SPREAD: ['HOME', 'AWAY'],
  TOTAL: ['OVER', 'UNDER'],
  TEAM_TOTAL: ['OVER', 'UNDER'],
  PLAYER_TOTAL: ['OVER', 'UNDER'],
  PLAYER_MILESTONE: ['OVER'],
  CATEGORICAL: ['YES'],
};
const SIMPLE = new Set(['MONEYLINE', 'SPREAD', 'TOTAL', 'TEAM_TOTAL', 'MONEYLINE_3_WAY']);
const LINELESS = new Set(['MONEYLINE', 'MONEYLINE_3_WAY', 'CATEGORICAL']);
/** DFS pick'em multipliers the served rows carry (test/helpers/validateRow.ts). */
const DFS_MIN = 0.5;
const DFS_MAX = 2;
/**
 * American prices are integers outside (-100, 100). The history ring packs a price and
 * its suspended bit into one 32-bit word (price * 2 + bit), so a price must fit in 30
 * bits and a sign: |price| < 2^30. Decimal prices must be above 1 and convert into that.
 */
const AMERICAN_LIMIT = 2 ** 30;
const MINUTE = 60_000;

/** Parses a time as the served records write it (minute with no zone is UTC), any ISO-8601 instant, or epoch ms. */
export function parseTime(value: string | number): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  const text = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value) ? `${value}Z` : value;
  if (!/^\d{4}-\d{2}-\d{2}(T|$)/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

export function validateBatch(raw: readonly unknown[], board: (layer: PendingEffects) => BoardView): ValidatedBatch {
  const effects = new PendingEffects();
  const view = board(effects);
  const changes: LoggedChange[] = [];
  const slots: number[] = [];
  const errors: ChangeError[] = [];
  if (raw.length === 0) errors.push({ index: 0, code: 'empty_batch', field: null, detail: 'a batch holds at least one change' });
  // one fail for the whole batch (a closure per change costs more than the check of a price tick)
  let index = 0;
  let failed = false;
  // bad changes counted; only the first MAX_LISTED_BAD_CHANGES have their errors listed
  let bad = raw.length === 0 ? 1 : 0;
  let lastBad = -1;
  const note = (error: ChangeError): void => {
    if (error.index !== lastBad) {
      lastBad = error.index;
      bad++;
    }
    if (bad <= MAX_LISTED_BAD_CHANGES) errors.push(error);
  };
  const fail = (code: string, field: string | null, detail: string): void => {
    failed = true;
    note({ index, code, field, detail });
  };
  for (; index < raw.length; index++) {
    const change = raw[index];
    if (change === UNDECODED) continue; // the decoder's error
    const tick = isWellFormedPriceTick(change);
    if (!tick) {
      if (nestsDeeperThan(change, MAX_CHANGE_DEPTH)) {
        note({ index, code: 'too_deep', field: null, detail: `the change nests objects or arrays more than ${MAX_CHANGE_DEPTH} levels deep` });
        continue;
      }
      const shape = shapeErrors(change, index);
      if (shape.length > 0) {
        for (const error of shape) note(error);
        continue;
      }
    }
    failed = false;
    if (tick && view.settled) {
      // the common case, a tick while no pending batch touches rows: one id look-up,
      // whose slot the apply reuses (a tick records no effects, so the view stays settled)
      const slot = view.settledLiveSlot((change as PriceTick).id);
      const normalized = checkPriceOnSlot(change as PriceTick, slot, slot < 0 ? undefined : view.settledSourceKind(slot), fail);
      if (failed || normalized === null) continue;
      changes.push(normalized);
      slots.push(slot);
      continue;
    }
    const normalized = checkChange(change as IngestChange, view, fail);
    if (failed || normalized === null) continue;
    record(normalized, effects, view);
    changes.push(normalized);
    slots.push(-1);
  }
  return { changes, errors, badChanges: bad, effects, slots };
}

type PriceTick = Extract<IngestChange, { op: 'price' }>;

const ODDS_ID_PATTERN = /^[^:]+:[^:]+:[^:]+:[^:]+$/;

/**
 * The common change, a price tick, checked by hand: true only for what the price
 * schema (changes.ts) accepts, so anything else, well formed or not, goes through the
 * schema and its error messages. Most of a feed's changes are ticks, and the compiled
 * schema costs several times this per change.
 */
function isWellFormedPriceTick(change: unknown): boolean {
  if (typeof change !== 'object' || change === null || Array.isArray(change)) return false;
  const c = change as Record<string, unknown>;
  if (c.op !== 'price' || typeof c.id !== 'string' || c.id.length > 400 || !ODDS_ID_PATTERN.test(c.id)) return false;
  for (const key in c) {
    const value = c[key];
    switch (key) {
      case 'op':
      case 'id':
        break;
      case 'priceAmerican':
        if (value !== null && !Number.isSafeInteger(value)) return false;
        break;
      case 'priceDecimal':
      case 'dfsMultiplier':
        if (!Number.isFinite(value)) return false;
        break;
      case 'suspended':
        if (typeof value !== 'boolean') return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

type Fail = (code: string, field: string | null, detail: string) => void;

function checkChange(change: IngestChange, view: BoardView, fail: Fail): LoggedChange | null {
  switch (change.op) {
    case 'odds':
      return checkOdds(change.row, view, fail);
    case 'price':
      return checkPrice(change, view, fail);
    case 'remove': {
      const eventId = change.id.slice(0, change.id.indexOf(':'));
      if (!view.rowIsLive(change.id, eventId)) fail('unknown_id', 'id', `no live row ${change.id}`);
      return { op: 'remove', id: change.id };
    }
    case 'status': {
      const event = view.event(change.eventId);
      if (event === undefined) fail('unknown_event', 'eventId', `no event ${change.eventId}`);
      else if (!isAllowedTransition(event.status, change.status)) fail('invalid_transition', 'status', `${event.status} cannot become ${change.status}`);
      return { op: 'status', eventId: change.eventId, status: change.status };
    }
    case 'event':
      return checkEvent(change.event, view, fail);
    case 'source': {
      const known = view.sourceKind(change.source.id);
      if (known !== undefined && known !== change.source.kind) {
        fail('kind_change', 'source.kind', `${change.source.id} is a ${known} source; its rows are priced that way, so its kind cannot change`);
      }
      return { op: 'source', source: { id: change.source.id, name: change.source.name, kind: change.source.kind } };
    }
    case 'team': {
      const t = change.team;
      if (!view.hasLeague(t.league)) fail('unknown_league', 'team.league', `no league ${t.league}`);
      if (t.venueId != null && !view.hasVenue(t.venueId)) fail('unknown_venue', 'team.venueId', `no venue ${t.venueId}`);
      return { op: 'team', team: { id: t.id, name: t.name, abbreviation: t.abbreviation, league: t.league, conference: t.conference ?? null, division: t.division ?? null, venueId: t.venueId ?? null } };
    }
    case 'player': {
      const p = change.player;
      if (!view.hasLeague(p.league)) fail('unknown_league', 'player.league', `no league ${p.league}`);
      const team = view.team(p.teamId);
      if (team === undefined) fail('unknown_team', 'player.teamId', `no team ${p.teamId}`);
      else if (team.league !== p.league) fail('league_mismatch', 'player.teamId', `team ${p.teamId} plays in ${team.league}, not ${p.league}`);
      return { op: 'player', player: { id: p.id, name: p.name, league: p.league, teamId: p.teamId, position: p.position } };
    }
    case 'season': {
      const s = change.season;
      if (!view.hasLeague(s.league)) fail('unknown_league', 'season.league', `no league ${s.league}`);
      if (s.startDate > s.endDate) fail('invalid_dates', 'season.endDate', 'endDate is before startDate');
      return { op: 'season', season: { ...s, futuresEventId: s.futuresEventId ?? null } };
    }
    case 'boxscore':
      return checkBoxScore(change, view, fail);
  }
}

function checkOdds(row: OddsRowIn, view: BoardView, fail: Fail): LoggedChange | null {
  const [idEvent, idBook, idSubtype, idSelection] = row.id.split(':');
  if (idEvent !== row.eventId) fail('id_mismatch', 'row.id', `the id's event part ${idEvent} is not eventId ${row.eventId}`);
  if (idBook !== row.sportsbook) fail('id_mismatch', 'row.id', `the id's sportsbook part ${idBook} is not sportsbook ${row.sportsbook}`);
  if (idSubtype !== row.marketSubtype) fail('id_mismatch', 'row.id', `the id's subtype part ${idSubtype} is not marketSubtype ${row.marketSubtype}`);
  if (row.selectionId !== undefined && row.selectionId !== idSelection) fail('id_mismatch', 'row.id', `the id's selection part ${idSelection} is not selectionId ${row.selectionId}`);
  if (!/^[A-Za-z0-9._~-]+$/.test(idSelection)) fail('invalid_id', 'row.id', `selection part ${idSelection} is not URL-safe`);
  if (!idSelection.startsWith(`${row.period}-${row.side}`)) fail('invalid_row', 'row.id', `the selection part ${idSelection} does not start with period-side ${row.period}-${row.side}`);

  const event = view.event(row.eventId);
  if (event === undefined) {
    fail('unknown_event', 'row.eventId', `no event ${row.eventId} (send the event first, in this batch or an earlier one)`);
    return null;
  }
  if (event.status === 'final' || event.status === 'cancelled') fail('event_closed', 'row.eventId', `event ${row.eventId} is ${event.status}`);
  if (row.league !== event.league) fail('league_mismatch', 'row.league', `event ${row.eventId} is in ${event.league}`);
  const kind = view.sourceKind(row.sportsbook);
  if (kind === undefined) fail('unknown_sportsbook', 'row.sportsbook', `no source ${row.sportsbook} (add it with a source change)`);

  const sides = SIDES[row.market];
  if (sides === undefined) fail('unknown_market', 'row.market', `market must be one of ${Object.keys(SIDES).join(', ')}`);
  else if (!sides.includes(row.side)) fail('invalid_row', 'row.side', `side ${row.side} is not one of ${sides.join(', ')} for ${row.market}`);
  if (SIMPLE.has(row.market) && row.marketSubtype !== row.market) fail('invalid_row', 'row.marketSubtype', `${row.market} has marketSubtype ${row.market}`);
  if ((row.market === 'PLAYER_TOTAL' || row.market === 'PLAYER_MILESTONE') && !row.marketSubtype.startsWith(`${row.market}_`)) {
    fail('invalid_row', 'row.marketSubtype', `${row.market} subtypes start with ${row.market}_`);
  }

  const line = row.line ?? null;
  if (LINELESS.has(row.market) && line !== null) fail('invalid_row', 'row.line', `${row.market} has no line`);
  if (!LINELESS.has(row.market) && line === null) fail('invalid_row', 'row.line', `${row.market} needs a line`);
  if (line !== null && !Number.isInteger(line * 2)) fail('invalid_row', 'row.line', `line ${line} is not a half point`);
  if (line !== null && (row.side === 'OVER' || row.side === 'UNDER') && line < 0) fail('invalid_row', 'row.line', `a total cannot be negative (${line})`);

  const price = rowPrice(row, kind === 'dfs', 'row.', fail);

  const playerId = row.playerId ?? null;
  const playerName = row.playerName ?? null;
  if ((playerId === null) !== (playerName === null)) fail('invalid_row', playerId === null ? 'row.playerId' : 'row.playerName', 'playerId and playerName come together');
  if ((row.market === 'PLAYER_TOTAL' || row.market === 'PLAYER_MILESTONE') && playerId === null) fail('invalid_row', 'row.playerId', `${row.market} needs a player`);
  const player = playerId === null ? undefined : view.player(playerId);
  if (playerId !== null && player === undefined) fail('unknown_player', 'row.playerId', `no player ${playerId}`);
  if (player !== undefined && player.league !== row.league) fail('league_mismatch', 'row.playerId', `player ${playerId} plays in ${player.league}`);

  let start = event.startTime;
  if (row.eventStartTime !== undefined) {
    const sent = parseTime(row.eventStartTime);
    if (sent === null) fail('invalid_time', 'row.eventStartTime', `not a time: ${row.eventStartTime}`);
    else if (sent !== event.startTime) fail('start_mismatch', 'row.eventStartTime', `event ${row.eventId} starts at ${new Date(event.startTime).toISOString()}`);
    else start = sent;
  }
  const scope = row.marketScope ?? null;
  if (event.isFutures && scope === null) fail('invalid_row', 'row.marketScope', `event ${row.eventId} is a futures anchor: its rows carry marketScope`);
  if (!event.isFutures && scope !== null) fail('invalid_row', 'row.marketScope', `event ${row.eventId} is a game: its rows carry no marketScope`);
  const segment = row.segment ?? null;
  if (segment !== null && scope === null) fail('invalid_row', 'row.segment', 'segment needs marketScope');

  if (price === null) return null;
  const input: OddsInput = {
    eventId: row.eventId,
    sportsbook: row.sportsbook,
    league: row.league,
    market: row.market,
    marketSubtype: row.marketSubtype,
    period: row.period,
    selectionId: idSelection,
    selection: row.selection,
    side: row.side,
    teamSide: row.teamSide,
    teamName: row.teamName,
    priceAmerican: price.american,
    dfsMultiplier: price.dfs,
    line,
    playerId,
    playerName,
    teamId: row.teamId !== undefined ? row.teamId : aboutTeam(row, event, player?.teamId ?? null),
    suspended: row.suspended ?? false,
    eventStartTime: start,
    updated: 0, // set at apply
    marketScope: scope,
    segment,
  };
  return { op: 'upsert', row: input };
}

/** The team a selection is about, as the fixture rows carry it (engine/model.ts OddsInput.teamId). */
function aboutTeam(row: OddsRowIn, event: { homeTeamId: string | null; awayTeamId: string | null }, playerTeam: string | null): string | null {
  if (row.playerId != null) return row.league === 'pga' ? null : playerTeam;
  const side = row.market === 'TEAM_TOTAL' ? row.teamSide : row.side;
  if (row.market === 'MONEYLINE' || row.market === 'MONEYLINE_3_WAY' || row.market === 'SPREAD' || row.market === 'TEAM_TOTAL') {
    return side === 'HOME' ? event.homeTeamId : side === 'AWAY' ? event.awayTeamId : null;
  }
  return null;
}

/** The price fields of a row or tick, checked for the source's kind; null when invalid or absent. */
function rowPrice(
  fields: { priceAmerican?: number | null; priceDecimal?: number | null; dfsMultiplier?: number | null },
  dfs: boolean,
  prefix: string,
  fail: Fail,
): { american: number | null; dfs: number | null } | null {
  const american = fields.priceAmerican ?? null;
  const decimal = fields.priceDecimal ?? null;
  const multiplier = fields.dfsMultiplier ?? null;
  if (dfs) {
    if (american !== null || decimal !== null) fail('invalid_price', `${prefix}${american !== null ? 'priceAmerican' : 'priceDecimal'}`, 'a DFS source prices with dfsMultiplier only');
    if (multiplier === null) {
      fail('invalid_price', `${prefix}dfsMultiplier`, 'a DFS row needs dfsMultiplier');
      return null;
    }
    if (!(multiplier >= DFS_MIN && multiplier <= DFS_MAX)) {
      fail('invalid_price', `${prefix}dfsMultiplier`, `dfsMultiplier must be within ${DFS_MIN}..${DFS_MAX}`);
      return null;
    }
    return american !== null || decimal !== null ? null : { american: null, dfs: multiplier };
  }
  if (multiplier !== null) fail('invalid_price', `${prefix}dfsMultiplier`, 'a sportsbook prices with priceAmerican or priceDecimal, not dfsMultiplier');
  let price: number | null = null;
  if (american !== null) {
    if (!Number.isInteger(american) || Math.abs(american) < 100 || Math.abs(american) >= AMERICAN_LIMIT) {
      fail('invalid_price', `${prefix}priceAmerican`, `priceAmerican must be an integer with 100 <= |price| < ${AMERICAN_LIMIT}`);
      return null;
    }
    price = american;
  }
  if (decimal !== null) {
    const converted = decimal > 1 ? decimalToAmerican(decimal) : NaN;
    if (!(decimal > 1) || !Number.isFinite(converted) || Math.abs(converted) >= AMERICAN_LIMIT) {
      fail('invalid_price', `${prefix}priceDecimal`, 'priceDecimal must be above 1 (and not so close to 1 that its American price overflows)');
      return null;
    }
    if (price !== null && price !== converted && americanToDecimal(price) !== decimal) {
      fail('price_mismatch', `${prefix}priceDecimal`, `priceDecimal ${decimal} is not priceAmerican ${price}`);
      return null;
    }
    price ??= converted;
  }
  if (price === null) {
    fail('invalid_price', `${prefix}priceAmerican`, 'a sportsbook row needs priceAmerican or priceDecimal');
    return null;
  }
  return multiplier === null ? { american: price, dfs: null } : null;
}

function checkPrice(change: PriceTick, view: BoardView, fail: Fail): LoggedChange | null {
  const [eventId, book] = change.id.split(':');
  const live = view.rowIsLive(change.id, eventId);
  return checkPriceOnSlot(change, live ? 0 : -1, live ? view.sourceKind(book) : undefined, fail);
}

/** A tick on the row at `slot` (-1: no live row), whose sportsbook is of `kind`. */
function checkPriceOnSlot(change: PriceTick, slot: number, kind: SourceKind | undefined, fail: Fail): LoggedChange | null {
  if (slot < 0) {
    fail('unknown_id', 'id', `no live row ${change.id}`);
    return null;
  }
  const dfs = kind === 'dfs';
  const hasPrice = change.priceAmerican != null || change.priceDecimal !== undefined || change.dfsMultiplier !== undefined;
  if (!hasPrice) {
    if (change.suspended === undefined) fail('empty_change', null, 'a price change carries a price or suspended');
    return { op: 'priceById', id: change.id, suspended: change.suspended };
  }
  const price = rowPrice(change, dfs, '', fail);
  if (price === null) return null;
  const out: LoggedChange = { op: 'priceById', id: change.id, priceAmerican: price.american };
  if (dfs) out.dfsMultiplier = price.dfs;
  if (change.suspended !== undefined) out.suspended = change.suspended;
  return out;
}

function checkEvent(e: EventIn, view: BoardView, fail: Fail): LoggedChange | null {
  if (!view.hasLeague(e.league)) fail('unknown_league', 'event.league', `no league ${e.league}`);
  const start = parseTime(e.startTime);
  if (start === null) fail('invalid_time', 'event.startTime', `not a time: ${e.startTime}`);
  else if (start % MINUTE !== 0) fail('invalid_time', 'event.startTime', 'startTime is minute aligned');
  const futures = e.isFutures ?? false;
  if (futures && (e.homeTeamId !== null || e.awayTeamId !== null)) fail('invalid_event', 'event.homeTeamId', 'a futures anchor has no teams');
  if (!futures) {
    for (const [field, teamId] of [['event.homeTeamId', e.homeTeamId], ['event.awayTeamId', e.awayTeamId]] as const) {
      if (teamId === null) {
        fail('invalid_event', field, 'a game has a home and an away team');
        continue;
      }
      const team = view.team(teamId);
      if (team === undefined) fail('unknown_team', field, `no team ${teamId}`);
      else if (team.league !== e.league) fail('league_mismatch', field, `team ${teamId} plays in ${team.league}`);
    }
    if (e.homeTeamId !== null && e.homeTeamId === e.awayTeamId) fail('invalid_event', 'event.awayTeamId', 'home and away are the same team');
  }
  if ((e.homeTeamId === null) !== (e.homeTeamName === null) || (e.awayTeamId === null) !== (e.awayTeamName === null)) {
    fail('invalid_event', 'event.homeTeamName', 'a team id and its name come together');
  }
  if (e.venueId != null && !view.hasVenue(e.venueId)) fail('unknown_venue', 'event.venueId', `no venue ${e.venueId}`);
  const known = view.event(e.id);
  if (known !== undefined && known.status !== e.status) {
    fail('use_status_change', 'event.status', `event ${e.id} is ${known.status}: change its status with a status change (it checks the transition and closes the rows)`);
  }
  if (start === null) return null;
  const event: EventRecord = {
    id: e.id,
    league: e.league,
    homeTeamId: e.homeTeamId,
    homeTeamName: e.homeTeamName,
    awayTeamId: e.awayTeamId,
    awayTeamName: e.awayTeamName,
    startTime: start,
    status: e.status,
    venueId: e.venueId ?? null,
    seasonYear: e.seasonYear,
    context: e.context ?? {},
    isFutures: futures,
  };
  return { op: 'event', event };
}

function checkBoxScore(change: Extract<IngestChange, { op: 'boxscore' }>, view: BoardView, fail: Fail): LoggedChange | null {
  const event = view.event(change.eventId);
  if (event === undefined) {
    fail('unknown_event', 'eventId', `no event ${change.eventId}`);
    return null;
  }
  if (event.isFutures || event.homeTeamId === null || event.awayTeamId === null) {
    fail('invalid_event', 'eventId', `event ${change.eventId} is a futures anchor: it has no box score`);
    return null;
  }
  const home = event.homeTeamId;
  const away = event.awayTeamId;
  const teams: TeamBoxRow[] = change.teams.map((t, i) => {
    if (t.teamId !== home && t.teamId !== away) fail('invalid_boxscore', `teams.${i}.teamId`, `${t.teamId} is neither team of ${change.eventId}`);
    return { eventId: change.eventId, teamId: t.teamId, homeId: home, awayId: away, league: event.league, homeScore: t.homeScore, awayScore: t.awayScore, result: t.result, stats: t.stats };
  });
  const date = new Date(event.startTime).toISOString().slice(0, 10);
  const players: PlayerBoxRow[] = change.players.map((p, i) => {
    if (view.player(p.playerId) === undefined) fail('unknown_player', `players.${i}.playerId`, `no player ${p.playerId}`);
    if (p.teamId !== home && p.teamId !== away) fail('invalid_boxscore', `players.${i}.teamId`, `${p.teamId} is neither team of ${change.eventId}`);
    return { eventId: change.eventId, playerId: p.playerId, teamId: p.teamId, date, data: p.data };
  });
  return { op: 'boxscore', eventId: change.eventId, teams, players };
}

/** Notes what a valid change does, for the changes (and batches) checked after it. */
function record(change: LoggedChange, effects: PendingEffects, view: BoardView): void {
  switch (change.op) {
    case 'upsert':
      effects.rows.set(oddsId(change.row), true);
      break;
    case 'remove':
      effects.rows.set(change.id, false);
      break;
    case 'status': {
      const event = view.event(change.eventId)!;
      effects.events.set(change.eventId, { ...event, status: change.status });
      break;
    }
    case 'event': {
      const e = change.event;
      effects.events.set(e.id, { league: e.league, homeTeamId: e.homeTeamId, awayTeamId: e.awayTeamId, startTime: e.startTime, status: e.status, isFutures: e.isFutures });
      break;
    }
    case 'source':
      effects.sources.set(change.source.id, change.source.kind);
      break;
    case 'team':
      effects.teams.set(change.team.id, { league: change.team.league });
      break;
    case 'player':
      effects.players.set(change.player.id, { name: change.player.name, league: change.player.league, teamId: change.player.teamId });
      break;
    default:
      break;
  }
}
