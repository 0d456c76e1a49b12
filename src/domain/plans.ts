export const planNames = ['starter', 'pro', 'enterprise'] as const;
export type PlanName = (typeof planNames)[number];

/** Messages per calendar month (UTC); null means unlimited. */
const planMonthlyLimits: Record<PlanName, number | null> = {
  starter: 10_000,
  pro: 60_000,
  enterprise: null,
};

/** A figure for each plan, such as a media allowance in bytes. */
export type PlanAmounts = Readonly<Record<PlanName, number>>;

export function isPlanName(value: string): value is PlanName {
  return (planNames as readonly string[]).includes(value);
}

/** The account's custom limit, when set, replaces the plan's. */
export function effectiveMonthlyLimit(plan: PlanName, customMonthlyLimit: number | null): number | null {
  return customMonthlyLimit ?? planMonthlyLimits[plan];
}

/** The quota bucket of an instant: "2026-11" for any time in November 2026, UTC. */
export function usagePeriod(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The instant the bucket of `at` ends and a fresh month starts. */
export function usagePeriodResetAt(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}
