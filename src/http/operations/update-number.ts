import { CALL_REPLY_TEXT_MAX_LENGTH } from '../../domain/calls.ts';
import { parseSettingInput } from '../../domain/send-policy.ts';
import { ref } from '../schema-refs.ts';
import { sendPolicySettingInput } from '../send-policy-schemas.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { numberSchema, presentNumber, unknownNumberId } from './number-schema.ts';
import { defineOperation, ok } from './operation.ts';

const settingsSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    auto_read: {
      type: 'boolean',
      description: 'Mark every message the number receives as read as soon as it is stored (the sender sees blue ticks).',
    },
    reject_calls: {
      type: 'boolean',
      description: 'Reject every call to the number as it rings; each is still reported to `call` webhooks.',
    },
    call_reply_text: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: CALL_REPLY_TEXT_MAX_LENGTH,
      description:
        'With reject_calls: the text sent to a caller whose call was rejected (a message like any other, counted in the monthly volume); ' +
        'null sends nothing.',
    },
    show_online: {
      type: 'boolean',
      description:
        'Show the number online to its contacts, as an open WhatsApp app does; the phone then gets no notifications of its own. Applied ' +
        'at once when the session is connected, else when it connects.',
    },
    send_policy: sendPolicySettingInput,
  },
} as const;

export const updateNumber = defineOperation(
  {
    params: {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } },
    },
    body: settingsSchema,
  },
  ['numbers', 'presence', 'pauses', 'sendQueues'],
)({
  method: 'PATCH',
  scope: 'send',
  path: '/numbers/:id',
  operationId: 'updateNumber',
  summary: "Change a number's settings",
  description:
    'Changes the settings given; the others keep their values. auto_read marks what the number receives as read at once; reject_calls ' +
    'rejects calls as they ring, sending call_reply_text to the caller when set; show_online shows the number online (and runs on the ' +
    "node that serves it); send_policy sets how the number's sends are paced (docs/send-governor.md): a preset, a policy of its own, " +
    "or null to follow its account's. {id} is the number's phone (E.164, + encoded as %2B or left as it is) or its number_id. Another " +
    "account's number is not found.",
  tag: 'numbers',
  answers: { 200: { ...numberSchema, properties: { ...numberSchema.properties, send_policy: ref('SendPolicySetting') } } },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'number_not_found', 'invalid_send_policy'],
  check: ({ body }) => {
    if (body.send_policy != null) parseSettingInput(body.send_policy, 'send_policy');
  },
  // Showing online acts through the session, so a change of it runs where the session is.
  owner: ({ scope, params, body }, { numbers }) =>
    body.show_online === undefined ? undefined : numbers.findNumber(scope, params.id).catch(unknownNumberId),
  handle: async ({ scope, actor, params, body }, { numbers, presence, pauses, sendQueues }) => {
    const settings = {
      autoRead: body.auto_read,
      rejectCalls: body.reject_calls,
      callReplyText: body.call_reply_text,
      showOnline: body.show_online,
    };
    const changesSettings = Object.values(settings).some((value) => value !== undefined);
    const number = changesSettings
      ? await numbers.updateSettings(scope, params.id, settings, actor).catch(unknownNumberId)
      : await numbers.findNumber(scope, params.id).catch(unknownNumberId);
    if (body.show_online !== undefined) await presence.applyShowOnline(number);
    const policy =
      body.send_policy === undefined
        ? await sendQueues.numberPolicy(number)
        : await sendQueues.setNumberPolicy(
            number,
            body.send_policy === null ? null : parseSettingInput(body.send_policy, 'send_policy'),
            actor,
          );
    return ok({ ...presentNumber(number, (await pauses.pausesOf([number.id])).get(number.id)), send_policy: policy });
  },
});
