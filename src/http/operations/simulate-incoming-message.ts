import { parseSandboxReceiveInput, presentMessage } from '../message-input.ts';
import { receivedMessageResponseSchema, sandboxReceiveRequestSchema } from '../schemas.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';
import { resolveMedia } from '../../messaging/send-use-case.ts';
import { addressesOf } from './sending.ts';

export const simulateIncomingMessage = defineOperation({ body: sandboxReceiveRequestSchema }, [
  'sandboxInbox',
  'media',
  'mediaLinks',
  'maxMessageLength',
])({
  method: 'POST',
  scope: 'send',
  path: '/sandbox/receive',
  operationId: 'simulateIncomingMessage',
  summary: 'Simulate an incoming message on a sandbox number',
  description:
    'Produces an incoming message on one of your sandbox numbers exactly as a real one would arrive: stored with status "received" and ' +
    'delivered to your webhooks. Incoming messages do not count against the monthly volume; simulated ones are limited per account ' +
    'and minute instead. /sandbox/receive and /api/sandbox/receive are the same operation.',
  tag: 'sandbox',
  answers: { 200: receivedMessageResponseSchema },
  errors: [
    ...KEYED_ERRORS,
    ...REQUEST_ERRORS,
    'invalid_phone_number',
    'empty_message',
    'message_too_long',
    'invalid_media',
    'media_type_mismatch',
    'media_kind_mismatch',
    'media_url_blocked',
    'media_too_large',
    'invalid_reply_to',
    'invalid_mention',
    'invalid_poll',
    'invalid_contact',
    'phone_not_owned',
    'capability_not_supported',
    // The sandbox number blocked the simulated sender (POST /blocklist), as WhatsApp would.
    'sender_blocked',
    'not_group_member',
    'media_not_found',
    'storage_quota_exceeded',
    'media_url_unreachable',
    'rate_limited',
    'media_fetch_budget_exceeded',
    'number_not_connected',
    'insufficient_storage',
  ],
  handle: async ({ scope, body }, services) => {
    const input = parseSandboxReceiveInput(body, services.maxMessageLength);
    const mediaInput = input.media;
    // An upload is sent as stored; bytes in the body are described but not stored here, as
    // the receiving number stores its own copy. Either is read only after the inbox's checks.
    const loadMedia =
      mediaInput === undefined
        ? undefined
        : mediaInput.data !== undefined
          ? () => services.media.describe(mediaInput.data!, mediaInput)
          : async () => services.media.outgoing(await resolveMedia(services, scope.accountId, mediaInput));
    const message = await services.sandboxInbox.receiveOnPhone(
      scope,
      input.toPhone,
      {
        fromPhone: input.fromPhone,
        text: input.text,
        ...(mediaInput !== undefined && { failedDownloads: input.failedDownloads }),
        ...(input.structured !== undefined && { structured: input.structured }),
        ...(input.groupId !== undefined && { groupId: input.groupId, mentions: input.mentions ?? [] }),
        ...(input.fromLid !== undefined && { fromLid: input.fromLid, withholdPhone: input.withholdPhone === true }),
        ...(input.referral !== undefined && { referral: input.referral }),
        ...(input.neverResent === true && { neverResent: true }),
      },
      input.replyTo,
      loadMedia,
    );
    const media = message.mediaId === null ? undefined : await services.media.find(scope.accountId, message.mediaId, 'media');
    return ok(presentMessage(message, media, addressesOf(services)));
  },
});
