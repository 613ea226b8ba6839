// A slot's market-group fields as strings, read from the engine's columns: what
// MarketGroups keys a row on and what its records echo.

import type { OddsStore } from '../oddsStore.ts';
import { NONE, SCOPES, SIDES, TEAM_SIDES } from '../oddsStore.ts';
import type { GroupRowInput } from './marketGroups.ts';

export function blankGroupInput(): GroupRowInput {
  return {
    eventId: '', market: '', marketSubtype: '', period: '', side: '', teamSide: '', line: null,
    playerId: null, marketScope: null, league: '', playerName: null, eventStartTime: 0,
  };
}

/** Fills `into` (a fresh object unless given: the live path reuses one) with slot's grouping fields. */
export function groupInputOf(s: OddsStore, slot: number, into: GroupRowInput = blankGroupInput()): GroupRowInput {
  const line = s.line[slot];
  into.eventId = s.events.get(s.event[slot]);
  into.market = s.markets.get(s.market[slot]);
  into.marketSubtype = s.subtypes.get(s.subtype[slot]);
  into.period = s.periods.get(s.period[slot]);
  into.side = SIDES[s.side[slot]];
  into.teamSide = TEAM_SIDES[s.teamSide[slot]];
  into.line = Number.isNaN(line) ? null : line;
  into.playerId = s.player[slot] === NONE ? null : s.players.get(s.player[slot]);
  into.marketScope = SCOPES[s.scope[slot]];
  into.league = s.leagues.get(s.league[slot]);
  into.playerName = s.playerName[slot] === NONE ? null : s.labels.get(s.playerName[slot]);
  into.eventStartTime = s.eventStartTime[slot];
  return into;
}
