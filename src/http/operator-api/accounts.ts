import { accountJson } from '../../accounts/account-json.ts';
import { planNames } from '../../domain/plans.ts';
import { ok } from '../operations/operation.ts';
import { defineOperatorOperation } from './operator-operation.ts';

// Accounts as `wagw account create|list|update` manage them, over the operator API. Every change
// goes through AccountsService with the token as its actor, so each has its audit row.

const accountSchema = {
  type: 'object',
  required: ['id', 'name', 'plan', 'monthly_limit', 'effective_monthly_limit', 'created_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'acc_…' },
    name: { type: 'string' },
    plan: { type: 'string', enum: [...planNames] },
    monthly_limit: { type: ['integer', 'null'], description: "A custom monthly message limit replacing the plan's; null for the plan's." },
    effective_monthly_limit: { type: ['integer', 'null'], description: 'The limit that applies; null for none.' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The path parameters of every operation on one account (its keys' too). */
export const accountParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', maxLength: 64, description: 'The account, acc_…' } },
} as const;

const planField = { type: 'string', enum: [...planNames], description: 'starter, pro or enterprise.' } as const;
const limitField = {
  type: ['integer', 'null'],
  minimum: 0,
  maximum: 1_000_000_000,
  description: "A custom monthly message limit replacing the plan's; null for the plan's.",
} as const;

const listAccounts = defineOperatorOperation({})({
  method: 'GET',
  path: '/admin/accounts',
  operationId: 'listAccounts',
  summary: 'Every account',
  description: 'Every account of the gateway, oldest first, with its plan and limits.',
  answers: { 200: { type: 'object', required: ['accounts'], properties: { accounts: { type: 'array', items: accountSchema } } } },
  errors: [],
  handle: async (_input, gateway) => ok({ accounts: (await gateway.accounts.listAccounts()).map(accountJson) }),
});

const createAccount = defineOperatorOperation({
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'What the account is called.' },
      plan: { ...planField, default: 'starter' },
      monthly_limit: limitField,
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts',
  operationId: 'createAccount',
  summary: 'Create an account',
  description: 'Makes an account, as `wagw account create` does; an audit row names the token.',
  answers: { 201: accountSchema },
  errors: [],
  handle: async ({ body, actor }, gateway) => {
    const account = await gateway.accounts.createAccount(
      { name: body.name, ...(body.plan !== undefined && { plan: body.plan }), customMonthlyLimit: body.monthly_limit ?? null },
      actor,
    );
    return { statusCode: 201, body: accountJson(account) };
  },
});

const getAccount = defineOperatorOperation({ params: accountParams })({
  method: 'GET',
  path: '/admin/accounts/:id',
  operationId: 'getAccount',
  summary: 'An account',
  description: 'One account, with its plan and limits.',
  answers: { 200: accountSchema },
  errors: ['account_not_found'],
  handle: async ({ params }, gateway) => ok(accountJson(await gateway.accounts.getAccount(params.id))),
});

const updateAccount = defineOperatorOperation({
  params: accountParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { plan: planField, monthly_limit: limitField },
  },
})({
  method: 'PATCH',
  path: '/admin/accounts/:id',
  operationId: 'updateAccount',
  summary: "Change an account's plan or limit",
  description: 'Changes what is given, as `wagw account update` does, and answers the account as it is now; an audit row names the token.',
  answers: { 200: accountSchema },
  errors: ['account_not_found'],
  handle: async ({ params, body, actor }, gateway) => {
    const account = await gateway.accounts.updateAccount(
      params.id,
      {
        ...(body.plan !== undefined && { plan: body.plan }),
        ...(body.monthly_limit !== undefined && { customMonthlyLimit: body.monthly_limit }),
      },
      actor,
    );
    return ok(accountJson(account));
  },
});

export const accountOperations = [listAccounts, createAccount, getAccount, updateAccount];
