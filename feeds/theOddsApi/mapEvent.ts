// One provider event (with its bookmakers' markets) as our changes: the event record,
// the teams and players it names, the sources it quotes, and one odds row per outcome.
// Odds ids are built from the provider's event id, our sportsbook id, our subtype and
// a selection id made of period, side, line and the team or player the outcome is
// about, so the same outcome has the same id in every poll and a new price is a tick.
// Outcomes that cannot be mapped (an unknown market key, a price outside what the
// board accepts, a yes/no prop with no line) are counted by reason and skipped.

import type { MarketScope, Side, SourceKind, TeamSide } from '../../engine/model.ts';
import { americanToDecimal } from '../../engine/model.ts';
import type { EventIn, OddsRowIn } from '../../ingest/changes.ts';
import { BASE_MARKETS, PERIOD_SUFFIXES, PLAYER_STATS, YES_NO_MILESTONES, bookOf, type LeagueMapping } from './mappingTables.ts';
import type { ProviderEventOdds, ProviderOutcome } from './providerTypes.ts';

export interface TeamIn {
  id: string;
  name: string;
  abbreviation: string;
  league: string;
}

export interface PlayerIn {
  id: string;
  name: string;
  league: string;
  teamId: string;
  position: string;
}

export interface SourceIn {
  id: string;
  name: string;
  kind: SourceKind;
}

export interface MappedRow {
  row: OddsRowIn;
  /** The provider's market key the row came from: which request answers for it (and may pull it). */
  marketKey: string;
}

export interface MappedEvent {
  event: EventIn;
  teams: TeamIn[];
  players: PlayerIn[];
  sources: SourceIn[];
  rows: MappedRow[];
  /** Skipped outcomes by reason. */
  skipped: Map<string, number>;
}

/** What a market key means here: market, subtype, period; null when it is not one we carry. */
export interface MarketKeyMeaning {
  market: string;
  marketSubtype: string;
  period: string;
  kind: 'game' | 'player' | 'milestone' | 'outright';
  /** Yes/No milestones: the line a Yes stands for. */
  milestoneLine?: number;
}

/** A DFS app's pick priced at this decimal per leg is a 1.0x pick: the 2-pick 3x power play (sqrt 3 per leg). */
const DFS_BASE_LEG = Math.sqrt(3);
const DFS_MIN = 0.5;
const DFS_MAX = 2;

export function slug(text: string): string {
  const s = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s.length > 0 ? s.slice(0, 60) : 'x';
}

/** 'm3.5' for -3.5: the URL-safe line token of selection ids (the fixture boards write lines the same way). */
export function lineToken(line: number): string {
  return line < 0 ? `m${-line}` : String(line);
}

export function teamIdOf(league: string, name: string): string {
  return `${league}-${slug(name)}`;
}

export function playerIdOf(league: string, name: string): string {
  return `${league}-p-${slug(name)}`;
}

function abbreviationOf(name: string): string {
  const words = name.split(/\s+/).filter((w) => w.length > 0);
  const last = words[words.length - 1] ?? name;
  return last.replace(/[^A-Za-z0-9]/g, '').slice(0, 3).toUpperCase() || 'TBD';
}

export function marketKeyMeaning(key: string, outright: boolean, league: string): MarketKeyMeaning | null {
  if (key === 'outrights') {
    if (!outright) return null;
    return { market: 'CATEGORICAL', marketSubtype: league === 'pga' ? 'TOURNAMENT_WINNER' : 'CHAMPIONSHIP_WINNER', period: 'FULL', kind: 'outright' };
  }
  const prop = /^(player|batter|pitcher)_(.+)$/.exec(key);
  if (prop !== null) {
    const name = prop[2].replace(/_alternate$/, '');
    const milestone = YES_NO_MILESTONES[name];
    if (milestone !== undefined) return { market: 'PLAYER_MILESTONE', marketSubtype: `PLAYER_MILESTONE_${milestone.stat}`, period: 'FULL', kind: 'milestone', milestoneLine: milestone.line };
    const stat = PLAYER_STATS[name] ?? name.toUpperCase();
    if (!/^[A-Z0-9]+(_[A-Z0-9]+)*$/.test(stat)) return null;
    return { market: 'PLAYER_TOTAL', marketSubtype: `PLAYER_TOTAL_${stat}`, period: 'FULL', kind: 'player' };
  }
  let base = key;
  let period = 'FULL';
  for (const [suffix, name] of Object.entries(PERIOD_SUFFIXES)) {
    if (key.endsWith(`_${suffix}`) && BASE_MARKETS[key.slice(0, -suffix.length - 1)] !== undefined) {
      base = key.slice(0, -suffix.length - 1);
      period = name;
      break;
    }
  }
  const meaning = BASE_MARKETS[base];
  if (meaning === undefined || meaning.market === 'CATEGORICAL') return null;
  return { market: meaning.market, marketSubtype: meaning.market, period, kind: 'game' };
}

function seasonYearOf(start: number, mapping: LeagueMapping): number {
  const date = new Date(start);
  // a season that crosses New Year (nfl, nba, epl, ...) is named by the year it starts in; July divides them
  return mapping.seasonCrossesYear && date.getUTCMonth() < 6 ? date.getUTCFullYear() - 1 : date.getUTCFullYear();
}

/** Start times are minute aligned on the board. */
export function startOf(commenceTime: string): number {
  const ms = Date.parse(commenceTime);
  return ms - (ms % 60_000);
}

export function mapEvent(event: ProviderEventOdds, mapping: LeagueMapping, outright: boolean): MappedEvent {
  const league = mapping.league;
  const start = startOf(event.commence_time);
  const skipped = new Map<string, number>();
  const skip = (reason: string) => skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  const home = outright ? null : event.home_team;
  const away = outright ? null : event.away_team;
  const teams: TeamIn[] = [];
  const homeId = home ? teamIdOf(league, home) : null;
  const awayId = away ? teamIdOf(league, away) : null;
  if (home && homeId) teams.push({ id: homeId, name: home, abbreviation: abbreviationOf(home), league });
  if (away && awayId) teams.push({ id: awayId, name: away, abbreviation: abbreviationOf(away), league });
  const isFutures = outright || home === null || away === null;
  const record: EventIn = {
    id: event.id,
    league,
    homeTeamId: isFutures ? null : homeId,
    homeTeamName: isFutures ? null : home,
    awayTeamId: isFutures ? null : awayId,
    awayTeamName: isFutures ? null : away,
    startTime: start,
    status: 'scheduled',
    seasonYear: seasonYearOf(start, mapping),
    isFutures,
    context: { source: 'the-odds-api', sportKey: event.sport_key },
  };
  const scope: MarketScope | null = isFutures ? mapping.outrightScope : null;
  const matchup = home && away ? `${away} @ ${home}` : '';
  const players = new Map<string, PlayerIn>();
  const sources = new Map<string, SourceIn>();
  const rows: MappedRow[] = [];

  for (const bookmaker of event.bookmakers) {
    const book = bookOf(bookmaker.key, bookmaker.title);
    let used = false;
    for (const market of bookmaker.markets) {
      const meaning = marketKeyMeaning(market.key, isFutures, league);
      if (meaning === null || (isFutures !== (meaning.kind === 'outright'))) {
        skip(`market ${market.key}`);
        continue;
      }
      const ml3 = meaning.market === 'MONEYLINE' && (market.outcomes.length === 3 || market.outcomes.some((o) => o.name === 'Draw'));
      const market3 = ml3 ? { ...meaning, market: 'MONEYLINE_3_WAY', marketSubtype: 'MONEYLINE_3_WAY' } : meaning;
      for (const outcome of market.outcomes) {
        const price = priceOf(outcome.price, book.kind);
        if (price === null) {
          skip('price out of range');
          continue;
        }
        const shape = outcomeShape(outcome, market3, { league, home, away, homeId, awayId, matchup }, skip);
        if (shape === null) continue;
        if (shape.player !== null && !players.has(shape.player.id)) players.set(shape.player.id, shape.player);
        const selectionId = shape.selectionId;
        const row: OddsRowIn = {
          id: `${event.id}:${book.id}:${market3.marketSubtype}:${selectionId}`,
          eventId: event.id,
          sportsbook: book.id,
          league,
          market: market3.market,
          marketSubtype: market3.marketSubtype,
          period: market3.period,
          selection: shape.selection.slice(0, 200),
          side: shape.side,
          teamSide: shape.teamSide,
          teamName: shape.teamName,
          line: shape.line,
          suspended: false,
          eventStartTime: start,
          ...(book.kind === 'dfs' ? { dfsMultiplier: price } : { priceAmerican: price }),
        };
        if (shape.player !== null) {
          row.playerId = shape.player.id;
          row.playerName = shape.player.name;
          // the provider does not say which team a player is on (see docs/feeds.md)
          row.teamId = null;
        }
        if (scope !== null) row.marketScope = scope;
        rows.push({ row, marketKey: market.key });
        used = true;
      }
    }
    if (used) sources.set(book.id, { id: book.id, name: book.name, kind: book.kind });
  }
  return { event: record, teams, players: [...players.values()], sources: [...sources.values()], rows, skipped };
}

/** American integer for a book; the per-pick multiplier for a DFS app; null when the board would refuse it. */
function priceOf(price: number, kind: SourceKind): number | null {
  if (!Number.isFinite(price)) return null;
  // the feed asks for American odds; |price| < 100 does not exist there, and 2^30 is the board's cap
  if (kind !== 'dfs') return Number.isInteger(price) && Math.abs(price) >= 100 && Math.abs(price) < 2 ** 30 ? price : null;
  if (!Number.isInteger(price) || Math.abs(price) < 100) return null;
  const multiplier = Math.round((americanToDecimal(price) / DFS_BASE_LEG) * 100) / 100;
  return multiplier >= DFS_MIN && multiplier <= DFS_MAX ? multiplier : null;
}

interface Matchup {
  league: string;
  home: string | null;
  away: string | null;
  homeId: string | null;
  awayId: string | null;
  matchup: string;
}

interface OutcomeShape {
  selectionId: string;
  selection: string;
  side: Side;
  teamSide: TeamSide;
  teamName: string;
  line: number | null;
  player: PlayerIn | null;
}

function formatLine(line: number): string {
  return line > 0 ? `+${line}` : String(line);
}

function outcomeShape(outcome: ProviderOutcome, meaning: MarketKeyMeaning, m: Matchup, skip: (reason: string) => void): OutcomeShape | null {
  const period = meaning.period;
  const teamSideOf = (name: string | undefined): 'HOME' | 'AWAY' | null => (name === m.home ? 'HOME' : name === m.away ? 'AWAY' : null);
  const point = outcome.point;
  const halfPoint = point === undefined || Number.isInteger(point * 2);
  if (!halfPoint) {
    skip('line not on a half point');
    return null;
  }
  switch (meaning.market) {
    case 'MONEYLINE':
    case 'MONEYLINE_3_WAY': {
      const side: Side | null = outcome.name === 'Draw' && meaning.market === 'MONEYLINE_3_WAY' ? 'DRAW' : teamSideOf(outcome.name);
      if (side === null) {
        skip('moneyline outcome names neither team');
        return null;
      }
      const teamSide: TeamSide = side === 'DRAW' ? 'NONE' : side;
      return { selectionId: `${period}-${side}`, selection: outcome.name, side, teamSide, teamName: side === 'DRAW' ? m.matchup : outcome.name, line: null, player: null };
    }
    case 'SPREAD': {
      const side = teamSideOf(outcome.name);
      if (side === null || point === undefined) {
        skip('spread outcome without a team or point');
        return null;
      }
      return { selectionId: `${period}-${side}-${lineToken(point)}`, selection: `${outcome.name} ${formatLine(point)}`, side, teamSide: side, teamName: outcome.name, line: point, player: null };
    }
    case 'TOTAL':
    case 'TEAM_TOTAL': {
      const side: Side | null = outcome.name === 'Over' ? 'OVER' : outcome.name === 'Under' ? 'UNDER' : null;
      if (side === null || point === undefined || point < 0) {
        skip('total outcome is not Over/Under at a point');
        return null;
      }
      if (meaning.market === 'TOTAL') {
        return { selectionId: `${period}-${side}-${point}`, selection: `${outcome.name} ${point}`, side, teamSide: 'NONE', teamName: m.matchup, line: point, player: null };
      }
      const teamSide = teamSideOf(outcome.description);
      if (teamSide === null) {
        skip('team total names neither team');
        return null;
      }
      const teamId = teamSide === 'HOME' ? m.homeId! : m.awayId!;
      const team = outcome.description!;
      return { selectionId: `${period}-${side}-${point}-${teamId}`, selection: `${team} ${outcome.name} ${point}`, side, teamSide, teamName: team, line: point, player: null };
    }
    case 'PLAYER_TOTAL':
    case 'PLAYER_MILESTONE': {
      const name = outcome.description;
      if (name === undefined || name.length === 0 || m.homeId === null) {
        skip('player prop without a player');
        return null;
      }
      let side: Side;
      let line: number;
      if (meaning.kind === 'milestone') {
        if (outcome.name !== 'Yes') {
          skip('milestone No side');
          return null;
        }
        side = 'OVER';
        line = meaning.milestoneLine!;
      } else {
        if ((outcome.name !== 'Over' && outcome.name !== 'Under') || point === undefined || point < 0) {
          skip('player prop is not Over/Under at a point');
          return null;
        }
        side = outcome.name === 'Over' ? 'OVER' : 'UNDER';
        line = point;
      }
      // a new player is filed under the home team: the provider names players without their team
      const player: PlayerIn = { id: playerIdOf(m.league, name), name: name.slice(0, 200), league: m.league, teamId: m.homeId, position: '' };
      const stat = meaning.marketSubtype.slice(meaning.market.length + 1).toLowerCase().replace(/_/g, ' ');
      const selection = meaning.kind === 'milestone' ? `${name} ${Math.ceil(line)}+ ${stat}` : `${name} ${outcome.name} ${line} ${stat}`;
      return { selectionId: `${period}-${side}-${line}-${player.id}`, selection, side, teamSide: 'NONE', teamName: m.matchup, line, player };
    }
    case 'CATEGORICAL':
      return { selectionId: `${period}-YES-${slug(outcome.name)}`, selection: outcome.name, side: 'YES', teamSide: 'NONE', teamName: '', line: null, player: null };
  }
  skip(`market ${meaning.market}`);
  return null;
}
