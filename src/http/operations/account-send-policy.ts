import { parseSettingInput } from '../../domain/send-policy.ts';
import { ref } from '../schema-refs.ts';
import { sendPolicySettingInput } from '../send-policy-schemas.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';

export const getAccountSendPolicy = defineOperation({}, ['sendQueues'])({
  method: 'GET',
  scope: 'read',
  path: '/account/send_policy',
  operationId: 'getAccountSendPolicy',
  summary: "The account's default send policy",
  description:
    "The policy that paces the sends of every number of the account that has none of its own (docs/send-governor.md); the gateway's " +
    '(WAGW_SEND_POLICY, `off` unless the operator set one) when the account has none.',
  tag: 'numbers',
  answers: { 200: ref('SendPolicySetting') },
  errors: KEYED_ERRORS,
  handle: async ({ scope }, { sendQueues }) => ok(await sendQueues.accountPolicy(scope.accountId)),
});

export const updateAccountSendPolicy = defineOperation(
  {
    body: { type: 'object', additionalProperties: false, required: ['send_policy'], properties: { send_policy: sendPolicySettingInput } },
  },
  ['sendQueues'],
)({
  method: 'PATCH',
  scope: 'send',
  path: '/account/send_policy',
  operationId: 'updateAccountSendPolicy',
  summary: "Set the account's default send policy",
  description:
    "A preset (`off`, `standard`, `cautious`), a policy of its own, or null to follow the gateway's. Numbers with a policy of their own " +
    'keep it. Messages already waiting keep their times; the next ones follow the new policy.',
  tag: 'numbers',
  answers: { 200: ref('SendPolicySetting') },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'invalid_send_policy'],
  handle: async ({ scope, body, actor }, { sendQueues }) =>
    ok(
      await sendQueues.setAccountPolicy(
        scope.accountId,
        body.send_policy === null ? null : parseSettingInput(body.send_policy, 'send_policy'),
        actor,
      ),
    ),
});
