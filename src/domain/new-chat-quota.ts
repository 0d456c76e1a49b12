/**
 * WhatsApp's cap on the chats a number may start with people who have not written to it
 * ("message capping", docs/adr/0058-new-chat-capping.md), as WhatsApp answered it: each figure
 * null where it gave none. WhatsApp answers the query with an error for some accounts; `status` is
 * then `unknown`, with the error, and the governor's own first-contact figure is the only cap.
 */
export interface NewChatQuota {
  /** `none` (not near the cap), a warning, `capped` (first contacts refused with 475), or `unknown`. */
  status: 'none' | 'first_warning' | 'second_warning' | 'capped' | 'unknown';
  total: number | null;
  used: number | null;
  cycleStartedAt: Date | null;
  cycleEndsAt: Date | null;
  /** Why WhatsApp gave no quota, when `status` is unknown. */
  error: string | null;
}

/**
 * What the gateway knows of a number's cap: WhatsApp's last answer (or its last push), when it
 * came, and whether a send met the cap (475) and until when first contacts are held for it.
 */
export interface NewChatQuotaState extends NewChatQuota {
  /** `whatsapp`: the figures are WhatsApp's; `fallback`: the query failed and the governor's own figure is the cap. */
  source: 'whatsapp' | 'fallback';
  readAt: Date;
  /** Set while first contacts are held: WhatsApp said `capped`, or refused a send with 475. */
  cappedUntil: Date | null;
}

/** How long a 475 holds first contacts when WhatsApp names no cycle end: until the quota is read again, at the latest. */
export const CAP_HOLD_WITHOUT_CYCLE_END_MS = 60 * 60_000;

/** The quota as the engine read it (or WhatsApp pushed it), over what was known before. */
export function quotaRead(previous: NewChatQuotaState | undefined, quota: NewChatQuota, at: Date): NewChatQuotaState {
  if (quota.status === 'unknown') {
    // The query failed: the governor falls back to its own figure, but a 475 already met still holds.
    return { ...quota, source: 'fallback', readAt: at, cappedUntil: stillCapped(previous, at) };
  }
  const cappedUntil =
    quota.status === 'capped' ? (quota.cycleEndsAt ?? new Date(at.getTime() + CAP_HOLD_WITHOUT_CYCLE_END_MS)) : stillCapped(previous, at);
  return { ...quota, source: 'whatsapp', readAt: at, cappedUntil };
}

/**
 * WhatsApp refused a send with 475: first contacts are held until the cycle ends, where the last
 * read named its end, else for CAP_HOLD_WITHOUT_CYCLE_END_MS (the session reads the quota again
 * at once, which names it).
 */
export function capMet(previous: NewChatQuotaState | undefined, at: Date): NewChatQuotaState {
  const cycleEndsAt = previous?.cycleEndsAt !== null && previous !== undefined && previous.cycleEndsAt > at ? previous.cycleEndsAt : null;
  const cappedUntil = cycleEndsAt ?? new Date(at.getTime() + CAP_HOLD_WITHOUT_CYCLE_END_MS);
  return {
    status: 'capped',
    total: previous?.total ?? null,
    used: previous?.used ?? null,
    cycleStartedAt: previous?.cycleStartedAt ?? null,
    cycleEndsAt,
    error: null,
    source: previous?.source ?? 'whatsapp',
    readAt: previous?.readAt ?? at,
    cappedUntil,
  };
}

function stillCapped(previous: NewChatQuotaState | undefined, at: Date): Date | null {
  return previous?.cappedUntil != null && previous.cappedUntil > at ? previous.cappedUntil : null;
}

/** Whether the state holds first contacts at `at`. */
export function isCapped(state: NewChatQuotaState | undefined, at: Date): boolean {
  return state?.cappedUntil != null && state.cappedUntil > at;
}

/**
 * The cap the governor's first-contact rule applies, from WhatsApp's figures: `remaining` first
 * contacts after `since` (the read), until `until` (the cycle's end). Undefined when WhatsApp gave
 * no figures, or its cycle is over: the policy's own figure is then the only cap.
 */
export interface NewChatCap {
  remaining: number;
  since: number;
  until: number;
}

export function capOf(state: NewChatQuotaState | undefined, at: Date): NewChatCap | undefined {
  if (state === undefined) return undefined;
  if (isCapped(state, at)) return { remaining: 0, since: state.readAt.getTime(), until: state.cappedUntil!.getTime() };
  if (state.source !== 'whatsapp' || state.total === null || state.used === null || state.cycleEndsAt === null) return undefined;
  if (state.cycleEndsAt <= at) return undefined;
  return { remaining: Math.max(0, state.total - state.used), since: state.readAt.getTime(), until: state.cycleEndsAt.getTime() };
}

/** The state as the API shows it (GET /numbers/{id}/queue, GET /new_chat_quota's sibling). */
export function presentNewChatQuota(state: NewChatQuotaState | undefined, at: Date) {
  if (state === undefined) return null;
  return {
    status: isCapped(state, at) ? ('capped' as const) : state.status,
    total: state.total,
    used: state.used,
    remaining: state.total === null || state.used === null ? null : Math.max(0, state.total - state.used),
    cycle_ends_at: state.cycleEndsAt?.toISOString() ?? null,
    capped_until: isCapped(state, at) ? state.cappedUntil!.toISOString() : null,
    source: state.source,
    error: state.error,
    read_at: state.readAt.toISOString(),
  };
}
