import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import { EngineSendError } from '../engines/engine.ts';

/**
 * An engine's "not connected" as the API answers it (503 number_not_connected, with the
 * session's status); any other error is left as it is. For the calls that act through a
 * number's session without sending a message: checks and typing.
 */
export function refusedBySession(number: WhatsAppNumber, error: unknown): never {
  if (error instanceof EngineSendError && error.failure === 'not_connected') {
    const status = error.sessionStatus ?? 'disconnected';
    throw new AppError('number_not_connected', `The WhatsApp session of from_phone is not connected (${status}).`, { from_phone: number.phone, status });
  }
  throw error;
}
