// Shared sentences and the curl example block of the route descriptions in the OpenAPI
// document (rendered at /docs). Every route's description ends with a runnable example
// against a service started with `npm start` (port 8080); key-designated routes send
// X-Api-Key from $API_KEY, which may be unset unless the service runs with REQUIRE_KEY=1
// (an empty header counts as no key). Ids are looked up with curl and jq first, because
// the board's ids follow the calendar. test/web/docs-examples.test.ts runs every block.

export const BASE_URL = 'http://localhost:8080';

/** The header argument of key-designated routes. */
export const KEY_HEADER = '-H "X-Api-Key: $API_KEY"';

/** Keyset paging, as every paginated route follows it. */
export const CURSOR_RULES =
  'Paging: pass nextCursor back verbatim as cursor, with the same filters (limit may change between pages); nextCursor null is the last page. A cursor that does not decode, was altered, or comes back with other filters answers 400 invalid_cursor.';

/** ETag revalidation, as every JSON route follows it. */
export const ETAG_RULES = 'Revalidate with If-None-Match: the ETag of an unchanged response answers 304 without a body.';

/** Parameter errors, as the query validator answers them. */
export const PARAMETER_ERRORS =
  'A bad value (format, range, unknown enum value, more than 20 list tokens, limit outside 1..1000) answers 400 invalid_parameter naming param (validValues for enums); unknown parameters are ignored and listed in meta.warnings.';

/** Keys on key-designated routes. */
export const KEY_RULES =
  'Key: X-Api-Key (or Authorization: Bearer); needed only when the service runs with REQUIRE_KEY=1 (401 missing_api_key without one); an unknown or revoked key answers 401 invalid_api_key.';

/** A markdown shell block of runnable lines, appended to a description. */
export function curlExample(...lines: string[]): string {
  return `\n\nExample:\n\n\`\`\`sh\n${lines.join('\n')}\n\`\`\``;
}

/** A description's sentences followed by the example block. */
export function described(sentences: readonly string[], example: string): string {
  return sentences.join(' ') + example;
}

/** A shell line that puts the id of the first active event in $EVENT. */
export const ACTIVE_EVENT = `EVENT=$(curl -s '${BASE_URL}/api/v1/events/active?limit=1' | jq -r '.data[0].id')`;

/** Price formats on the odds routes. */
export const ODDS_FORMAT_RULES =
  'Prices: odds_format=all (default) gives priceAmerican and priceDecimal, american or decimal only that field, probability replaces both with priceProbability (1/decimal, 4 places); DFS pick\'em rows carry dfsMultiplier instead of prices. Times: updated is ISO-8601 UTC with milliseconds, eventStartTime minute precision without zone.';
