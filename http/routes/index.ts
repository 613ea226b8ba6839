// The route table: one module per family of routes.
import type { AnyRoute } from '../router.ts';
import { catalogRoutes } from './catalog.ts';
import type { AppContext } from './context.ts';
import { oddsRoutes } from './odds.ts';
import { signalRoutes } from './signals.ts';
import { snapshotRoutes } from './snapshot.ts';
import { webRoutes } from './web.ts';

export function buildRoutes(ctx: AppContext): AnyRoute[] {
  return [...oddsRoutes(ctx), ...catalogRoutes(ctx), ...snapshotRoutes(ctx), ...signalRoutes(ctx), ...webRoutes()];
}
