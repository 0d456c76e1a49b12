import { apiKeyJson } from '../../accounts/account-json.ts';
import { MAX_API_KEY_NAME_LENGTH } from '../../accounts/api-keys-service.ts';
import { apiKeyScopes } from '../../domain/api-key-scopes.ts';
import { ok } from '../operations/operation.ts';
import { accountParams } from './accounts.ts';
import { defineOperatorOperation } from './operator-operation.ts';

// An account's API keys as `wagw key create|list|revoke` manage them, over the operator API: how
// an onboarding script hands a new account its key. Making and revoking go through
// ApiKeysService with the token as actor, so each has its audit row.

const apiKeySchema = {
  type: 'object',
  required: ['id', 'name', 'hint', 'scopes', 'account_id', 'created_by_user_id', 'created_at', 'revoked_at', 'last_used_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'key_…' },
    name: { type: 'string' },
    hint: { type: 'string', description: 'The end of the key, to recognise it; never the key.' },
    scopes: { type: 'array', items: { type: 'string', enum: [...apiKeyScopes] } },
    account_id: { type: 'string' },
    created_by_user_id: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
    last_used_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

const listApiKeys = defineOperatorOperation({ params: accountParams })({
  method: 'GET',
  path: '/admin/accounts/:id/api_keys',
  operationId: 'listAccountApiKeys',
  summary: "An account's API keys",
  description: "The account's keys, revoked ones included, with their scopes and last use; never a key itself (only its hash is stored).",
  answers: { 200: { type: 'object', required: ['api_keys'], properties: { api_keys: { type: 'array', items: apiKeySchema } } } },
  errors: ['account_not_found'],
  handle: async ({ params }, gateway) => {
    const account = await gateway.accounts.getAccount(params.id);
    return ok({ api_keys: (await gateway.apiKeys.listKeys(account.id)).map(apiKeyJson) });
  },
});

const createApiKey = defineOperatorOperation({
  params: accountParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: MAX_API_KEY_NAME_LENGTH, pattern: '\\S', description: 'What the key is for.' },
      scopes: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { type: 'string', enum: [...apiKeyScopes] },
        description: 'What the key may do; without it, read and send (what every key did before scopes). webhooks is opt-in.',
      },
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/api_keys',
  operationId: 'createAccountApiKey',
  summary: 'Make an API key for an account',
  description:
    'Makes a key, as `wagw key create` does, and answers it once in `key`: only its hash is kept, so it cannot be read again. ' +
    'An audit row names the token.',
  answers: {
    201: {
      ...apiKeySchema,
      required: [...apiKeySchema.required, 'key'],
      properties: { ...apiKeySchema.properties, key: { type: 'string', description: 'The key, shown this once.' } },
    },
  },
  errors: ['account_not_found'],
  handle: async ({ params, body, actor }, gateway) => {
    const made = await gateway.apiKeys.createKey({
      accountId: params.id,
      ...(body.name !== undefined && { name: body.name }),
      ...(body.scopes !== undefined && { scopes: body.scopes }),
      actor,
    });
    return { statusCode: 201, body: { ...apiKeyJson(made.apiKey), key: made.plaintext } };
  },
});

const revokeApiKey = defineOperatorOperation({
  params: {
    type: 'object',
    required: ['id'],
    additionalProperties: false,
    properties: { id: { type: 'string', maxLength: 64, description: 'The key, key_…' } },
  },
  body: { type: 'object', additionalProperties: false, properties: {} },
})({
  method: 'POST',
  path: '/admin/api_keys/:id/revoke',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key',
  description:
    'Revokes the key, as `wagw key revoke` does: refused from the next request on every node. Revoking twice is harmless. An audit row ' +
    'names the token.',
  answers: { 200: apiKeySchema },
  errors: ['api_key_not_found'],
  handle: async ({ scope, params, actor }, gateway) => ok(apiKeyJson(await gateway.apiKeys.revokeKey(scope, params.id, actor))),
});

export const apiKeyOperations = [listApiKeys, createApiKey, revokeApiKey];
