// The route table: one module per family of routes, each reading the services the
// composition root built.
import type { AnyRoute } from '../router.ts';
import { catalogRoutes } from './catalog.ts';
import { historyRoutes } from './history.ts';
import { oddsRoutes } from './odds.ts';
import type { Services } from './services.ts';
import { screenRoutes } from './screens.ts';
import { signalRoutes } from './signals.ts';
import { snapshotRoutes } from './snapshot.ts';
import { webRoutes } from './web.ts';

export function buildRoutes(services: Services): AnyRoute[] {
  return [...oddsRoutes(services), ...catalogRoutes(services), ...snapshotRoutes(services), ...signalRoutes(services), ...screenRoutes(services), ...historyRoutes(services), ...webRoutes()];
}
