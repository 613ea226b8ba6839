// How the page names a market and a selection: the API's subtype codes are for programs.

/**
 * A market subtype as a reader says it: PLAYER_TOTAL_PASSING_YARDS -> "Total passing yards"
 * (the player's name follows, so "player" says nothing).
 */
export function marketWords(subtype: string): string {
  const words = subtype.replace(/^PLAYER_/, '').replaceAll('_', ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The selection as a line's first words. A player prop's selection already names the
 * player ("Rafael Clark Under 3.5 Shots"): the name is added only when it does not.
 */
export function selectionOf(row: { selection: string; playerName?: string | undefined }): string {
  const player = row.playerName;
  return player !== undefined && !row.selection.includes(player) ? `${player} ${row.selection}` : row.selection;
}
