// /api/v1/account/usage: the calling key's plan,
// month usage and limits. It never errors, so the facade does not authenticate it
// (authenticate: false): an unknown or revoked key, or none, answers the anonymous
// plan. It is not counted (reading your usage does not use it up) and not cached
// (the answer depends on the key and on requests counted a moment ago).
import { defineRoute, type AnyRoute } from '../router.ts';
import type { Services } from './services.ts';
import { BASE_URL, curlExample, KEY_HEADER } from './routeDocs.ts';

export function accountRoutes(ctx: Services): AnyRoute[] {
  // the key checker the facade counts with: on a replicated node its monthly count is the fleet's
  const keys = ctx.keyChecker;
  const route = defineRoute({
    path: '/api/v1/account/usage',
    auth: 'none',
    authenticate: false,
    response: 'AccountUsage',
    query: [],
    summary: 'Plan, monthly usage and cap, and per-minute limit of the calling key.',
    description:
      'Send the key as for any route (X-Api-Key or Authorization: Bearer). Without a valid key (none, unknown or revoked) the answer is the anonymous plan: ENTERPRISE with every other field null. Never errors: no 401 and no 429 here. This request is not counted and carries no X-RateLimit headers. monthlyUsed counts this UTC month\'s requests, including those not yet written to the database. meta.updated is the time of the request.' +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/account/usage'`),
    handle: (req) => {
      const usage = keys.accountUsage(req.apiKey, req.now);
      // the anonymous plan carries no time of its own: the board's (from the log), so every node answers it alike;
      // a key's usage is counted up to the moment it is read
      return { kind: 'data', data: [usage], updated: usage.key === null ? ctx.engine.asOf() : req.now };
    },
  });
  return [route];
}
