import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import { EngineSendError } from '../engines/engine.ts';

/** How long a number that WhatsApp rate-limited is asked to wait before trying again. */
const WHATSAPP_BACKOFF_SECONDS = 60;

export function whatsAppRateLimited(number: WhatsAppNumber): AppError {
  return new AppError(
    'rate_limited',
    `WhatsApp is limiting how fast ${number.phone} may act (rate-overlimit); nothing was done. Try again in ${WHATSAPP_BACKOFF_SECONDS} s.`,
    { retry_after_seconds: WHATSAPP_BACKOFF_SECONDS },
  );
}

/** 503 number_not_connected: the session of from_phone is not connected, with its status. */
export function notConnected(number: WhatsAppNumber, status: string): AppError {
  return new AppError('number_not_connected', `The WhatsApp session of from_phone is not connected (${status}).`, {
    from_phone: number.phone,
    status,
  });
}

/**
 * An engine's "not connected" as the API answers it (503 number_not_connected, with the
 * session's status), and WhatsApp's rate limit as a 429; any other error is left as it is. For
 * the calls that act through a number's session without sending a message: checks, typing, groups.
 */
export function refusedBySession(number: WhatsAppNumber, error: unknown): never {
  if (error instanceof EngineSendError && error.failure === 'rate_limited') throw whatsAppRateLimited(number);
  if (error instanceof EngineSendError && error.failure === 'not_connected') {
    throw notConnected(number, error.sessionStatus ?? 'disconnected');
  }
  throw error;
}

/**
 * A simulated incoming message for a number whose session is not live (stopped, or between
 * owners) is refused as a send from it is: 503 number_not_connected, naming the receiving number.
 */
export function refusedIncoming(number: WhatsAppNumber, error: unknown): never {
  if (error instanceof EngineSendError && error.failure === 'sender_blocked') {
    throw new AppError('sender_blocked', `${number.phone} has blocked from_phone; as on WhatsApp, its messages are not delivered.`, {
      field: 'from_phone',
    });
  }
  if (error instanceof EngineSendError && error.failure === 'not_connected') {
    const status = error.sessionStatus ?? 'disconnected';
    throw new AppError('number_not_connected', `The session of to_phone is not connected (${status}); nothing was received.`, {
      to_phone: number.phone,
      status,
    });
  }
  throw error;
}
