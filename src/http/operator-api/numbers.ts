import { numberJson } from '../../accounts/account-json.ts';
import { CALL_REPLY_TEXT_MAX_LENGTH } from '../../domain/calls.ts';
import { AppError } from '../../domain/errors.ts';
import { engineKinds, type WhatsAppNumber } from '../../domain/model.ts';
import { withinAccount, type OperatorScope } from '../../domain/tenant-scope.ts';
import { ok } from '../operations/operation.ts';
import { accountParams } from './accounts.ts';
import { defineOperatorOperation, type OperatorServices } from './operator-operation.ts';

// An account's WhatsApp numbers over the operator API, as `wagw number add|list|remove|set` and
// the console's number pages manage them: list, add, read, change settings and holder, move to
// another account, remove. Each is under its account's path, so a number of another account is
// not found (404 number_not_found), and each change goes through NumbersService with the token
// as the actor of its audit row (ADR 0069). Linking and the session: number-session.ts.

export const numberSchema = {
  type: 'object',
  required: [
    'id',
    'phone',
    'engine',
    'status',
    'account_id',
    'holder_user_id',
    'auto_read',
    'reject_calls',
    'call_reply_text',
    'show_online',
    'proxy',
    'created_at',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'num_…' },
    phone: { type: 'string', description: 'E.164.' },
    engine: { type: 'string', enum: [...engineKinds] },
    status: { type: 'string', description: "The session's status (connected, connecting, logged_out, …)." },
    account_id: { type: 'string' },
    holder_user_id: { type: ['string', 'null'], description: 'The user of the account who holds the number; null for nobody.' },
    auto_read: { type: 'boolean' },
    reject_calls: { type: 'boolean' },
    call_reply_text: { type: ['string', 'null'] },
    show_online: { type: 'boolean' },
    proxy: {
      type: ['string', 'null'],
      description: "The proxy the number's WhatsApp connection goes through, with its credentials shown as ***; null connects directly.",
      examples: ['socks5://***@proxy.example:1080'],
    },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The path parameters of an operation on one number of one account. */
export const numberParams = {
  type: 'object',
  required: ['id', 'number_id'],
  additionalProperties: false,
  properties: {
    id: accountParams.properties.id,
    number_id: { type: 'string', maxLength: 64, description: 'The number: its id (num_…) or its phone in E.164.' },
  },
} as const;

const holderField = {
  type: ['string', 'null'],
  maxLength: 64,
  description: 'The user of the account who holds the number (user_…); null for nobody.',
} as const;

/** The account, then its number: an unknown account is its own 404, and another account's number is not found. */
export async function numberOf(
  gateway: OperatorServices,
  scope: OperatorScope,
  accountId: string,
  numberId: string,
): Promise<WhatsAppNumber> {
  await gateway.accounts.getAccount(accountId);
  return gateway.numbers.findNumber(withinAccount(scope, accountId), numberId);
}

const listNumbers = defineOperatorOperation({ params: accountParams })({
  method: 'GET',
  path: '/admin/accounts/:id/numbers',
  operationId: 'listAccountNumbers',
  summary: "An account's numbers",
  description: "The account's WhatsApp numbers, with their engine, session status, holder and settings.",
  answers: { 200: { type: 'object', required: ['numbers'], properties: { numbers: { type: 'array', items: numberSchema } } } },
  errors: ['account_not_found'],
  handle: async ({ scope, params }, gateway) => {
    await gateway.accounts.getAccount(params.id);
    return ok({ numbers: (await gateway.numbers.listNumbers(withinAccount(scope, params.id))).map(numberJson) });
  },
});

const addNumber = defineOperatorOperation({
  params: accountParams,
  body: {
    type: 'object',
    required: ['phone'],
    additionalProperties: false,
    properties: {
      phone: { type: 'string', maxLength: 32, description: 'The number, E.164.', examples: ['+447700900123'] },
      engine: { type: 'string', enum: [...engineKinds], description: 'The engine that serves it; sandbox when not given.' },
      holder_user_id: { ...holderField, type: 'string' },
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/numbers',
  operationId: 'addAccountNumber',
  summary: 'Add a number to an account',
  description:
    "Adds a WhatsApp number to the account, as `wagw number add` does; a node claims it at once. A real (baileys) number's phone " +
    'is then linked through its session (POST /admin/numbers/{id}/session/link). An audit row names the token.',
  answers: { 201: numberSchema },
  errors: ['account_not_found', 'invalid_phone_number', 'user_not_found', 'phone_already_registered'],
  handle: async ({ scope, params, body, actor }, gateway) => {
    const added = await gateway.numbers
      .addNumber(
        scope,
        {
          accountId: params.id,
          phone: body.phone,
          ...(body.engine !== undefined && { engine: body.engine }),
          ...(body.holder_user_id !== undefined && { holderUserId: body.holder_user_id }),
        },
        actor,
      )
      .catch(engineNotHere);
    return { statusCode: 201, body: numberJson(added) };
  },
});

/** NumbersService says invalid_argument for an engine this gateway does not run; the API names the field. */
function engineNotHere(error: unknown): never {
  if (error instanceof AppError && error.code === 'invalid_argument')
    throw new AppError('invalid_request', error.message, { field: 'engine', problem: 'not_allowed' });
  throw error;
}

const getNumber = defineOperatorOperation({ params: numberParams })({
  method: 'GET',
  path: '/admin/accounts/:id/numbers/:number_id',
  operationId: 'getAccountNumber',
  summary: 'A number of an account',
  description: "One number of the account; another account's number is not found.",
  answers: { 200: numberSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: async ({ scope, params }, gateway) => ok(numberJson(await numberOf(gateway, scope, params.id, params.number_id))),
});

const updateNumber = defineOperatorOperation({
  params: numberParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      holder_user_id: holderField,
      auto_read: { type: 'boolean', description: 'Mark what the number receives as read at once.' },
      reject_calls: { type: 'boolean', description: 'Reject every call as it rings.' },
      call_reply_text: {
        type: ['string', 'null'],
        minLength: 1,
        maxLength: CALL_REPLY_TEXT_MAX_LENGTH,
        description: 'What a rejected caller is sent; null sends nothing.',
      },
      show_online: { type: 'boolean', description: "Show the number online to its contacts, from its session's next start." },
    },
  },
})({
  method: 'PATCH',
  path: '/admin/accounts/:id/numbers/:number_id',
  operationId: 'updateAccountNumber',
  summary: "Change a number's holder or settings",
  description:
    'Changes what is given, as `wagw number set` does, and gives the number to a user of its account (`holder_user_id`). ' +
    "show_online is applied from the session's next start here; the account's own PATCH /numbers/{id} applies it at once. An " +
    'audit row names the token and what changed.',
  answers: { 200: numberSchema },
  errors: ['account_not_found', 'number_not_found', 'user_not_found'],
  handle: async ({ scope, params, body, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    const settings = {
      holderUserId: body.holder_user_id,
      autoRead: body.auto_read,
      rejectCalls: body.reject_calls,
      callReplyText: body.call_reply_text,
      showOnline: body.show_online,
    };
    return ok(numberJson(await gateway.numbers.updateSettings(scope, number.id, settings, actor)));
  },
});

const moveNumber = defineOperatorOperation({
  params: numberParams,
  body: {
    type: 'object',
    required: ['account_id'],
    additionalProperties: false,
    properties: { account_id: { type: 'string', maxLength: 64, description: 'The account the number moves to, acc_…' } },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/numbers/:number_id/move',
  operationId: 'moveAccountNumber',
  summary: 'Move a number to another account',
  description:
    'Moves the number to another account, as the console does: it sends for that account from now on, its message history stays ' +
    "with the old one, and its holder is cleared. An unknown target is 404 account_not_found. The audit row is the old account's and " +
    'names the new one.',
  answers: { 200: numberSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: async ({ scope, params, body, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    return ok(numberJson(await gateway.numbers.reassignNumber(scope, number.id, body.account_id, actor)));
  },
});

const removeNumber = defineOperatorOperation({ params: numberParams })({
  method: 'DELETE',
  path: '/admin/accounts/:id/numbers/:number_id',
  operationId: 'removeAccountNumber',
  summary: 'Remove a number',
  description:
    'Removes the number, as `wagw number remove` does; its message history stays with the account. Answers the number as it was. An ' +
    'audit row names the token.',
  answers: { 200: numberSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: async ({ scope, params, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    return ok(numberJson(await gateway.numbers.removeNumber(scope, number.id, actor)));
  },
});

export const numberOperations = [listNumbers, addNumber, getNumber, updateNumber, moveNumber, removeNumber];
