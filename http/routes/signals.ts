import type { AnyRoute } from '../router.ts';
import type { AppContext } from './context.ts';

export function signalRoutes(_ctx: AppContext): AnyRoute[] {
  return [];
}
