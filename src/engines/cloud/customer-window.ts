import { AppError } from '../../domain/errors.ts';
import type { E164 } from '../../domain/phone.ts';
import type { LastInbound } from '../../store/repositories/customer-windows.ts';

/**
 * WhatsApp's customer-service window (ADR 0072): a business may send free-form messages to a
 * person for 24 hours after the person last wrote; outside it, only a template.
 */
const CUSTOMER_WINDOW_MS = 24 * 60 * 60_000;

export interface CustomerWindow {
  open: boolean;
  /** When it closes (open) or closed; null when the person never wrote. */
  closedAt: Date | null;
}

export function customerWindow(last: LastInbound | undefined, at: Date): CustomerWindow {
  if (last === undefined) return { open: false, closedAt: null };
  const closedAt = new Date(last.at.getTime() + CUSTOMER_WINDOW_MS);
  return { open: closedAt.getTime() > at.getTime(), closedAt };
}

export function windowClosed(toPhone: E164 | undefined, closedAt: Date | null, message?: string): AppError {
  const words =
    message ??
    (closedAt === null
      ? `${toPhone} has never written to this number, so WhatsApp takes only a template; nothing was sent.`
      : `${toPhone}'s 24-hour window closed at ${closedAt.toISOString()}; WhatsApp takes only a template until they write again. Nothing was sent.`);
  return new AppError('window_closed', words, { field: 'to_phone', window_closed_at: closedAt?.toISOString() ?? null });
}
