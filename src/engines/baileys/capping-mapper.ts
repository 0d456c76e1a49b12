import type { NewChatMessageCapInfo } from 'baileys';
import type { NewChatQuota } from '../engine.ts';

/** WhatsApp's code for a send refused because the account met its cap on new chats (message capping, ADR 0058). */
export const NEW_CHAT_CAPPED_CODE = '475';

/** WhatsApp's capping statuses as the port names them. */
const CAPPING_STATUSES: Readonly<Record<string, NewChatQuota['status']>> = {
  NONE: 'none',
  FIRST_WARNING: 'first_warning',
  SECOND_WARNING: 'second_warning',
  CAPPED: 'capped',
};

/**
 * Baileys' NewChatMessageCapInfo (fetchNewChatMessageCap's answer, and the payload of its
 * `message-capping.update` event) in the port's terms. Every field of it is optional.
 */
export function mapCapInfo(info: NewChatMessageCapInfo): NewChatQuota {
  return {
    status: CAPPING_STATUSES[info.capping_status ?? 'NONE'] ?? 'unknown',
    total: typeof info.total_quota === 'number' ? info.total_quota : null,
    used: typeof info.used_quota === 'number' ? info.used_quota : null,
    cycleStartedAt: unixSecondsDate(info.cycle_start_timestamp),
    cycleEndsAt: unixSecondsDate(info.cycle_end_timestamp),
    error: null,
  };
}

/**
 * The query failed (WhatsApp answers 500 for some accounts): that is an answer too, `unknown` with
 * the error, since the number sends on regardless and the governor's own cap stands in.
 */
export function failedCapRead(error: unknown): NewChatQuota {
  const reason = error instanceof Error ? error.message : String(error);
  return { status: 'unknown', total: null, used: null, cycleStartedAt: null, cycleEndsAt: null, error: reason };
}

/** A time WhatsApp gives as a string of Unix seconds; null when it gives none, or not a number. */
function unixSecondsDate(seconds: string | undefined): Date | null {
  if (seconds === undefined || !/^\d+$/.test(seconds)) return null;
  return new Date(Number(seconds) * 1000);
}
