// Plan tiers (the numbers are this project's choice). A key copies its
// plan's limits when it is created, so changing this table does not silently change
// what existing customers were given.

export const PLAN_NAMES = ['FREE', 'PRO', 'ENTERPRISE'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface PlanLimits {
  monthlyCap: number;
  rateLimitPerMinute: number;
}

export const PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  FREE: { monthlyCap: 10_000, rateLimitPerMinute: 60 },
  PRO: { monthlyCap: 1_000_000, rateLimitPerMinute: 600 },
  ENTERPRISE: { monthlyCap: 50_000_000, rateLimitPerMinute: 6_000 },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}
