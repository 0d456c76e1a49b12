import type { MediaObject } from '../../domain/media.ts';
import type { SendOutcome } from '../../messaging/send-request.ts';
import type { SendAnswer, SendParts } from '../../messaging/send-use-case.ts';
import { presentMessage } from '../message-input.ts';
import type { Answer } from './operation.ts';
import type { OperationServices } from './services.ts';

/** What a send reaches of the operations' services. */
export type SendingServices = Pick<
  OperationServices,
  'sender' | 'governor' | 'idempotentSender' | 'media' | 'mediaLinks' | 'sendBacklog' | 'accounts' | 'linkPreviews'
>;

/** The send use case's parts, with the API's way of writing a sent message. */
export function sendParts(services: SendingServices): SendParts {
  const addresses = addressesOf(services);
  return { ...services, present: (outcome, media) => presentSent(outcome, media, addresses) };
}

/** A send's answer as the registry sends it: a replay says so in Idempotent-Replayed. */
export function asAnswer(answer: SendAnswer): Answer {
  return { statusCode: answer.statusCode, body: answer.body, ...(answer.replayed && { headers: { 'Idempotent-Replayed': 'true' } }) };
}

/** A send's answer: the message as sent (200), or as queued with when it is due (202). */
function presentSent(outcome: SendOutcome, media: MediaObject | undefined, addresses: ReturnType<typeof addressesOf>) {
  const presented = presentMessage(outcome, media, addresses);
  if (outcome.queue === undefined) return presented;
  return {
    ...presented,
    scheduled_for: outcome.queue.scheduledFor?.toISOString() ?? null,
    expires_at: outcome.queue.expiresAt.toISOString(),
    wait_reason: outcome.queue.waitReason,
  };
}

/** Where answers say a file is downloaded: under WAGW_PUBLIC_URL when it is set. */
export function addressesOf(services: Pick<OperationServices, 'mediaLinks'>) {
  return { plain: (id: string) => services.mediaLinks.plain(id) };
}
