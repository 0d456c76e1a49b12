import { parsePhoneField } from '../message-input.ts';
import { SANDBOX_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';

/** How long a simulated call rings unless rejected: WhatsApp rings for about 45 seconds. */
const DEFAULT_RINGS_FOR_SECONDS = 45;

const simulatedCallSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'to_phone'],
  properties: {
    from_phone: { type: 'string', description: 'The simulated caller, E.164.' },
    to_phone: { type: 'string', description: 'One of your sandbox numbers.' },
    video: { type: 'boolean', default: false, description: 'A video call rather than a voice call.' },
    group_id: { type: 'string', description: 'A group call, made in this group, which both phones belong to.' },
    rings_for_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 120,
      default: DEFAULT_RINGS_FOR_SECONDS,
      description: 'How long it rings before it is missed, unless the number rejects it first.',
    },
  },
} as const;

const simulatedCallAnswerSchema = {
  type: 'object',
  required: ['call_id', 'from_phone', 'to_phone', 'video', 'group_id', 'rings_until'],
  properties: {
    call_id: { type: 'string', description: 'The call_id its `call` events carry.' },
    from_phone: { type: 'string' },
    to_phone: { type: 'string' },
    video: { type: 'boolean' },
    group_id: { type: ['string', 'null'] },
    rings_until: { type: 'string', format: 'date-time', description: 'When it is missed unless rejected first.' },
  },
} as const;

export const simulateIncomingCall = defineOperation({ body: simulatedCallSchema }, ['sandboxInbox'])({
  method: 'POST',
  scope: 'send',
  path: '/sandbox/call',
  operationId: 'simulateIncomingCall',
  summary: 'Simulate an incoming call on a sandbox number',
  description:
    'A simulated phone calls one of your sandbox numbers, as a real call arrives: `call` webhooks hear it offered, then rejected (at ' +
    'once when the number has reject_calls, and the caller is sent call_reply_text) or missed when it has rung for rings_for_seconds. ' +
    'Limited per account and minute together with simulated messages.',
  tag: 'sandbox',
  answers: { 200: simulatedCallAnswerSchema },
  errors: [...SANDBOX_ERRORS, 'not_group_member', 'group_not_found'],
  owner: ({ body }) => parsePhoneField(body.to_phone, 'to_phone'),
  handle: async ({ scope, body }, { sandboxInbox }) => {
    const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
    const toPhone = parsePhoneField(body.to_phone, 'to_phone');
    const video = body.video ?? false;
    const ringsForMs = (body.rings_for_seconds ?? DEFAULT_RINGS_FOR_SECONDS) * 1000;
    const startedAt = Date.now();
    const callId = await sandboxInbox.callOnPhone(scope, toPhone, {
      fromPhone,
      video,
      ringsForMs,
      ...(body.group_id !== undefined && { groupId: body.group_id }),
    });
    return ok({
      call_id: callId,
      from_phone: fromPhone,
      to_phone: toPhone,
      video,
      group_id: body.group_id ?? null,
      rings_until: new Date(startedAt + ringsForMs).toISOString(),
    });
  },
});
