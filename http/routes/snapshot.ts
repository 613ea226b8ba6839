import type { AnyRoute } from '../router.ts';
import type { AppContext } from './context.ts';

export function snapshotRoutes(_ctx: AppContext): AnyRoute[] {
  return [];
}
