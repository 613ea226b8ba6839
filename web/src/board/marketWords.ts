// How the page names a market: the API's subtype codes are for programs.

/**
 * A market subtype as a reader says it: PLAYER_TOTAL_PASSING_YARDS -> "Total passing yards"
 * (the player's name follows, so "player" says nothing).
 */
export function marketWords(subtype: string): string {
  const words = subtype.replace(/^PLAYER_/, '').replaceAll('_', ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
