/**
 * Why a number holds its sends (docs/number-pauses.md): WhatsApp restricted it (463), put it
 * under a reach-out time lock, rate-limited it (rate-overlimit, 429) or logged it out, or an
 * operator paused it.
 */
export const pauseReasons = ['restricted', 'reachout_timelock', 'rate_limited', 'logged_out', 'manual'] as const;
export type PauseReason = (typeof pauseReasons)[number];

/** How a pause ended: its lift time came (or WhatsApp lifted it), someone resumed it, or the number was linked again. */
export const resumeReasons = ['lifted', 'manual', 'relinked'] as const;
export type ResumeReason = (typeof resumeReasons)[number];

export interface NumberPause {
  reason: PauseReason;
  /** What WhatsApp or the operator said, when there is more to say than the reason. */
  detail: string | null;
  since: Date;
  /** When it lifts by itself; null when nobody knows. */
  until: Date | null;
}

export function isPauseReason(value: string): value is PauseReason {
  return (pauseReasons as readonly string[]).includes(value);
}

/** What a sender asks before a message leaves a number: why it must wait, and until when if known. */
export interface SendHold {
  holdOf(numberId: string): { reason: string; until: Date | null } | null;
}

/** The pause as the API, the CLI and webhooks show it. */
export function presentPause(pause: NumberPause | null | undefined) {
  if (pause === null || pause === undefined) return null;
  return { reason: pause.reason, since: pause.since.toISOString(), until: pause.until?.toISOString() ?? null };
}

/**
 * When a message waiting in a paused number's queue can leave: not before the pause's lift
 * time, and at no time anyone can name while the pause lasts until someone resumes it (null).
 * The stored due time is only when the queue runner looks again, which would tell a client a
 * time in the past, or a gap it is not waiting for.
 */
export function dueUnderPause(scheduledFor: Date, pause: Pick<NumberPause, 'until'>): Date | null {
  if (pause.until === null) return null;
  return pause.until > scheduledFor ? pause.until : scheduledFor;
}
