// The cold-data routes: events, teams, players, reference catalogs and the
// account, one module each, registered here as one family.
import type { AnyRoute } from '../router.ts';
import { accountRoutes } from './account.ts';
import type { Services } from './services.ts';
import { eventRoutes } from './events.ts';
import { playerRoutes } from './players.ts';
import { referenceRoutes } from './reference.ts';
import { teamRoutes } from './teams.ts';

export function catalogRoutes(ctx: Services): AnyRoute[] {
  return [...eventRoutes(ctx), ...teamRoutes(ctx), ...playerRoutes(ctx), ...referenceRoutes(ctx), ...accountRoutes(ctx)];
}
