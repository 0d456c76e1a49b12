import { parsePhoneField } from '../message-input.ts';
import { SANDBOX_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';

/** The longest simulated restriction: a day, as long as a rehearsal needs. */
const LONGEST_LIFT_SECONDS = 86_400;

export const simulateRestriction = defineOperation(
  {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['phone', 'kind', 'lift_after_seconds'],
      properties: {
        phone: { type: 'string', description: 'One of your sandbox numbers (E.164).' },
        kind: {
          type: 'string',
          enum: ['restricted', 'rate_overlimit', 'new_chat_cap', 'quiet_session'],
          description:
            "restricted: WhatsApp's 463, told to the number at once; rate_overlimit: its next sends are answered rate-overlimit; " +
            "new_chat_cap: WhatsApp's cap on new chats, whose cycle ends at the lift time (its sends to people who never wrote to it " +
            'past new_chats are answered 475); quiet_session: the session stays open and hears nothing until the lift time, when it ' +
            'is restarted as a quiet one is.',
        },
        new_chats: {
          type: 'integer',
          minimum: 0,
          maximum: 10_000,
          description: "With kind new_chat_cap: the cycle's quota of new chats (0 by default: the next new chat meets the cap).",
        },
        lift_after_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: LONGEST_LIFT_SECONDS,
          description: 'When the simulated network lifts it, from now.',
        },
      },
    },
  },
  ['sandboxInbox'],
)({
  method: 'POST',
  scope: 'send',
  path: '/sandbox/restrict',
  operationId: 'simulateRestriction',
  summary: 'Simulate WhatsApp restricting, capping or going quiet on a sandbox number',
  description:
    'Rehearses your handling of number.paused (docs/number-pauses.md), or of number.capped (docs/send-governor.md). kind "new_chat_cap" ' +
    "caps the number's new chats until the lift time: its sends to people who never wrote to it, past new_chats, are answered 200 sent " +
    'and then fail with error_code 475 (a message.status event), number.capped follows, and from then on such sends wait in the queue ' +
    '(202, wait_reason new_chat_cap) until the lift time while replies go at once; GET /numbers/{id}/queue shows the quota. ' +
    'kind "quiet_session" rehearses a session that looks open and delivers nothing (docs/whatsapp.md#sessions-that-stay-up): the ' +
    'number still shows connected, what is sent to it waits on the network, and at the lift time the session is restarted: ' +
    'session.status connecting with the quiet-session reason (wagw_quiet_session_restarts_total counts it), then connected, and ' +
    'what waited arrives. ' +
    'kind "restricted" pauses the number at once (reason restricted, ' +
    'until now + lift_after_seconds); kind "rate_overlimit" answers the number\'s next send 429 rate_limited and pauses it (reason ' +
    'rate_limited) until the lift time. Either way sends are refused with 503 number_paused while it lasts (a number with a send ' +
    'policy queues them until the lift time, wait_reason paused), and number.resumed ' +
    '(reason lifted) follows at the lift time. Counted with your simulated incoming messages per minute.',
  tag: 'sandbox',
  answers: {
    200: {
      type: 'object',
      required: ['phone', 'kind', 'until'],
      properties: {
        phone: { type: 'string' },
        kind: { type: 'string', enum: ['restricted', 'rate_overlimit', 'new_chat_cap', 'quiet_session'] },
        until: { type: 'string', format: 'date-time' },
      },
    },
  },
  errors: SANDBOX_ERRORS,
  // On the number's owner, whose session a cap or a quiet session is rehearsed on.
  owner: ({ body }) => parsePhoneField(body.phone, 'phone'),
  handle: async ({ scope, body }, { sandboxInbox }) => {
    const phone = parsePhoneField(body.phone, 'phone');
    const until = new Date(Date.now() + body.lift_after_seconds * 1000);
    const number = await sandboxInbox.restrict(scope, phone, {
      kind: body.kind,
      until,
      ...(body.new_chats !== undefined && { newChats: body.new_chats }),
    });
    return ok({ phone: number.phone, kind: body.kind, until: until.toISOString() });
  },
});
