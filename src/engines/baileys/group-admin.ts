/**
 * An admin's changes to a group, through Baileys: per-participant answers in the gateway's terms,
 * and WhatsApp's refusals as the engine port names them. Pure where it can be, so each answer
 * WhatsApp gives is a unit test.
 */
import { jidDecode } from 'baileys';
import type { ParticipantAction, ParticipantOutcome, ParticipantResult } from '../../domain/groups.ts';
import type { E164 } from '../../domain/phone.ts';
import { EngineSendError } from '../engine.ts';

/** What WhatsApp answered for each participant: its error code as a string, '200' when done. */
export interface ParticipantAnswer {
  status: string;
  jid?: string;
}

/**
 * Each phone's outcome, from WhatsApp's per-participant codes: 403 on an add is the person's
 * privacy setting, 408 a phone that left the group too recently, 409 one already in it, 404
 * one without WhatsApp (on an add) or not in the group (otherwise). A phone WhatsApp did not
 * answer for is `refused`.
 */
export function participantOutcomes(
  action: ParticipantAction,
  phones: readonly E164[],
  answers: readonly ParticipantAnswer[],
): ParticipantResult[] {
  const byDigits = new Map(answers.map((answer) => [jidDecode(answer.jid ?? '')?.user, answer.status]));
  return phones.map((phone) => ({ phone, outcome: outcomeOf(action, byDigits.get(phone.slice(1))) }));
}

function outcomeOf(action: ParticipantAction, status: string | undefined): ParticipantOutcome {
  switch (status) {
    case '200':
      return 'done';
    case '403':
      return action === 'add' ? 'privacy_restricted' : 'refused';
    case '408':
      return 'recently_left';
    case '409':
      return action === 'add' ? 'already_member' : 'refused';
    case '404':
      return action === 'add' ? 'not_on_whatsapp' : 'not_member';
    default:
      return 'refused';
  }
}

/**
 * WhatsApp's refusal of a group change, as the port names it: not an admin (401, 403), not in
 * the group (404, 406), or `rate-overlimit`; anything else is passed on as it is.
 */
export function groupRefusal(error: unknown): unknown {
  const boom = error as { message?: unknown; data?: unknown; output?: { statusCode?: number } };
  const statusCode = boom.output?.statusCode ?? (typeof boom.data === 'number' ? boom.data : undefined);
  if (boom.message === 'rate-overlimit' || statusCode === 429)
    return new EngineSendError('rate_limited', 'WhatsApp is limiting how fast this number may act (rate-overlimit).');
  if (statusCode === 401 || statusCode === 403)
    return new EngineSendError('not_group_admin', 'WhatsApp refused the change: the number is not an admin of the group.');
  if (statusCode === 404 || statusCode === 406)
    return new EngineSendError('not_group_member', 'WhatsApp refused the change: the number is not in the group.');
  return error;
}
