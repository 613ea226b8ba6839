import type { AnyRoute } from '../router.ts';
import type { AppContext } from './context.ts';

export function oddsRoutes(_ctx: AppContext): AnyRoute[] {
  return [];
}
