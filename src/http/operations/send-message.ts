import { parseIdempotencyKey } from '../../messaging/idempotent-send.ts';
import { parseSendInput } from '../message-input.ts';
import type { SendInput } from '../../messaging/send-input.ts';
import {
  idempotencyKeyHeadersSchema,
  idempotentReplayedHeaderSchema,
  messageRequestSchema,
  queuedMessageResponseSchema,
  sentMessageResponseSchema,
} from '../schemas.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { defineSessionOperation } from './operation.ts';
import { answerKnownKey, sendHere, toKnownPhone } from '../../messaging/send-use-case.ts';
import { asAnswer, sendParts } from './sending.ts';

export const sendMessage = defineSessionOperation({ body: messageRequestSchema, headers: idempotencyKeyHeadersSchema }, [
  'sender',
  'governor',
  'idempotentSender',
  'media',
  'mediaLinks',
  'accounts',
  'linkPreviews',
  'maxMessageLength',
  'identities',
  'numberChecks',
  'sendBacklog',
]).reading<SendCommand>()({
  method: 'POST',
  scope: 'send',
  path: '/send_message',
  operationId: 'sendMessage',
  summary: 'Send a WhatsApp message: a text, a file, a location, contact cards or a poll',
  description:
    'Sends from one of your account\'s numbers to any phone number, or to a person by LID (to_phone "<digits>@lid"), whom the number\'s ' +
    "map must know a phone for (else 404 contact_not_found). A phone of a line with two forms (Brazil's ninth digit, Mexico's 52 1, " +
    "Argentina's 54 9) is answered, stored and reported in the form WhatsApp knows the account by. " +
    'The 200 comes only after the message is durably stored and the engine ' +
    'has accepted it. /send_message and /api/send_message are the same operation. With an Idempotency-Key header, a retry of the same ' +
    'request within 24 hours answers the first response (marked Idempotent-Replayed: true) instead of sending again. When the ' +
    "number's send policy (docs/send-governor.md) makes the message wait, or send_at schedules it, it is stored in the number's queue " +
    'and answered 202 `queued` with scheduled_for; `wait: true` or `Prefer: wait=N` answers once it has left.',
  tag: 'messages',
  answers: {
    200: { ...sentMessageResponseSchema, headers: idempotentReplayedHeaderSchema },
    202: { ...queuedMessageResponseSchema, headers: idempotentReplayedHeaderSchema },
  },
  errors: [
    ...KEYED_ERRORS,
    ...REQUEST_ERRORS,
    ...SESSION_ERRORS,
    'empty_message',
    'message_too_long',
    'invalid_media',
    'media_type_mismatch',
    'media_kind_mismatch',
    'media_url_blocked',
    'media_too_large',
    'recipient_not_on_whatsapp',
    // A Cloud API number, to a person whose 24-hour window is closed (docs/cloud-api.md).
    'window_closed',
    'template_not_found',
    'invalid_template_parameters',
    'invalid_interactive',
    'invalid_reply_to',
    'invalid_mention',
    'invalid_poll',
    'invalid_contact',
    'link_previews_disabled',
    'invalid_idempotency_key',
    'not_group_member',
    'media_not_found',
    'request_in_progress',
    'send_outcome_unknown',
    'storage_quota_exceeded',
    'media_url_unreachable',
    'idempotency_key_reused',
    'quota_exceeded',
    'queue_full',
    'upload_rate_exceeded',
    'media_fetch_budget_exceeded',
    'insufficient_storage',
    'send_not_recorded',
    'number_paused',
    'contact_not_found',
    'overloaded',
    'invalid_schedule',
  ],
  // The body is read once, here, on each node that runs the send; everything after reads the command.
  command: ({ body, idempotencyKey }, { maxMessageLength }) => ({
    input: parseSendInput(body, maxMessageLength),
    idempotencyKey: parseIdempotencyKey(idempotencyKey),
  }),
  owner: ({ command }) => command.input.fromPhone,
  // A replay, a reused key or a request in progress is answered here, without the owner.
  answerWithoutOwner: async ({ command, number }, services) => {
    if (command.idempotencyKey === undefined) return undefined;
    const known = await answerKnownKey(
      sendParts(services),
      number,
      await toKnownPhone(services, number, command.input),
      command.idempotencyKey,
    );
    return known === undefined ? undefined : asAnswer(known);
  },
  handle: async ({ scope, command, number, preferWaitSeconds }, services) => {
    const input = await toKnownPhone(services, number, command.input, true);
    return asAnswer(await sendHere(sendParts(services), scope, number, input, command.idempotencyKey, preferWaitSeconds));
  },
});

/** A send as its body and Idempotency-Key were read, once. */
interface SendCommand {
  input: SendInput;
  idempotencyKey: string | undefined;
}
