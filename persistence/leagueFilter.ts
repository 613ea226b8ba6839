// The league filter of the team and player lists: one code, any-of several, or none.
// Codes are lower case; matching is case-insensitive.

export const ONE_LEAGUE = 1;
export const MANY_LEAGUES = 2;

/** Adds the league filter's shape bit and parameter. Returns false when it matches nothing. */
export function applyLeagueFilter(
  league: string | readonly string[] | undefined,
  params: Record<string, string | number>,
): { shape: number; matchesNothing: boolean } {
  if (league === undefined) return { shape: 0, matchesNothing: false };
  const codes = typeof league === 'string' ? [league] : league;
  if (codes.length === 0) return { shape: 0, matchesNothing: true };
  if (codes.length === 1) {
    params.league = codes[0]!.toLowerCase();
    return { shape: ONE_LEAGUE, matchesNothing: false };
  }
  params.leagues = JSON.stringify(codes.map((c) => c.toLowerCase()));
  return { shape: MANY_LEAGUES, matchesNothing: false };
}

export function leagueClause(shape: number): string | null {
  if (shape & ONE_LEAGUE) return 'league = @league';
  if (shape & MANY_LEAGUES) return 'league IN (SELECT value FROM json_each(@leagues))';
  return null;
}
