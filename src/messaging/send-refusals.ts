// How the send use case refuses a send: a mention of a non-member, the month's quota used up,
// or the number paused (a session not connected is session-refusals.ts's, shared with the other calls).
import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { usagePeriodResetAt } from '../domain/plans.ts';
import { roleOf, type Group } from '../domain/groups.ts';
import type { QuotaTerms } from './send-request.ts';

/** Every mentioned phone must be a member other than the sender, or WhatsApp would highlight nobody. */
export function assertMembers(group: Group, mentions: readonly E164[], sender: E164): void {
  const index = mentions.findIndex((phone) => phone === sender || roleOf(group, phone) === undefined);
  if (index < 0) return;
  const phone = mentions[index]!;
  const why = phone === sender ? 'is from_phone itself' : `is not a member of group ${group.id}`;
  throw new AppError('invalid_mention', `mentions[${index}] ${phone} ${why}; mention members only.`, { field: `mentions[${index}]` });
}

export function quotaExceeded(terms: QuotaTerms, used: number): AppError {
  const resetAt = usagePeriodResetAt(terms.at).toISOString();
  return new AppError(
    'quota_exceeded',
    `This account has used its monthly message volume (${terms.limit} on the ${terms.plan} plan); it resets at ${resetAt}.`,
    { plan: terms.plan, used, limit: terms.limit, resets_at: resetAt },
  );
}

/** When a client is asked to look again at a number paused until someone resumes it. */
const INDEFINITE_PAUSE_RETRY_AFTER_SECONDS = 60;

export function numberPaused(number: WhatsAppNumber, held: { reason: string; until: Date | null }): AppError {
  const until = held.until?.toISOString() ?? null;
  const retryAfterSeconds =
    held.until === null ? INDEFINITE_PAUSE_RETRY_AFTER_SECONDS : Math.max(1, Math.ceil((held.until.getTime() - Date.now()) / 1000));
  return new AppError(
    'number_paused',
    `from_phone is paused (${held.reason.replace(/_/g, ' ')})${until === null ? ' until it is resumed' : ` until ${until}`}; nothing was sent.`,
    {
      from_phone: number.phone,
      reason: held.reason,
      until,
      retry_after_seconds: retryAfterSeconds,
    },
  );
}
