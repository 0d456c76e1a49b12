import { userJson } from '../../accounts/account-json.ts';
import { EMAIL_PATTERN } from '../../accounts/accounts-service.ts';
import { AppError } from '../../domain/errors.ts';
import { userRoles } from '../../domain/model.ts';
import { withinAccount } from '../../domain/tenant-scope.ts';
import { ok } from '../operations/operation.ts';
import { accountParams } from './accounts.ts';
import { defineOperatorOperation } from './operator-operation.ts';

// An account's users over the operator API, as `wagw user create|list` and the console's account
// and team pages manage them: list, add, read, change the role, reset the password, remove. Each
// is under its account's path, so a user of another account is not found (404 user_not_found),
// and each change goes through AccountsService or TeamService with the token as the actor of its
// audit row. A password is never answered back: only one the gateway generated, this once.

const userSchema = {
  type: 'object',
  required: ['id', 'email', 'account_id', 'role', 'is_operator', 'created_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'user_…' },
    email: { type: 'string', description: 'The sign-in email, in lower case.' },
    account_id: { type: ['string', 'null'] },
    role: { type: 'string', enum: [...userRoles], description: "owner, admin or member: what the user may do in the account's dashboard." },
    is_operator: { type: 'boolean', description: 'Whether the user also runs the gateway (the operator console).' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const generatedPasswordField = {
  type: 'string',
  description: 'The password the gateway generated, shown this once (only its hash is kept); absent when one was given.',
} as const;

/** The path parameters of an operation on one user of one account. */
const userParams = {
  type: 'object',
  required: ['id', 'user_id'],
  additionalProperties: false,
  properties: {
    id: accountParams.properties.id,
    user_id: { type: 'string', maxLength: 64, description: 'The user, user_…' },
  },
} as const;

const roleField = { type: 'string', enum: [...userRoles], description: 'owner, admin or member.' } as const;

const listUsers = defineOperatorOperation({ params: accountParams })({
  method: 'GET',
  path: '/admin/accounts/:id/users',
  operationId: 'listAccountUsers',
  summary: "An account's users",
  description: "The account's users, oldest first, with their roles; never a password.",
  answers: { 200: { type: 'object', required: ['users'], properties: { users: { type: 'array', items: userSchema } } } },
  errors: ['account_not_found'],
  handle: async ({ scope, params }, gateway) => {
    await gateway.accounts.getAccount(params.id);
    return ok({ users: (await gateway.accounts.listUsers(withinAccount(scope, params.id))).map(userJson) });
  },
});

const createUser = defineOperatorOperation({
  params: accountParams,
  body: {
    type: 'object',
    required: ['email'],
    additionalProperties: false,
    properties: {
      email: {
        type: 'string',
        maxLength: 254,
        pattern: EMAIL_PATTERN.source,
        description: 'The sign-in email.',
        examples: ['owner@example.com'],
      },
      // No `default`: the typed client would then require the field (member is the service's default).
      role: { ...roleField, description: 'owner, admin or member; member when not given.' },
      password: {
        type: 'string',
        maxLength: 1024,
        description:
          'The sign-in password: at least 12 characters and not easy to guess (else 400 weak_password). Without it one is generated ' +
          'and answered this once.',
      },
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/users',
  operationId: 'createAccountUser',
  summary: 'Add a user to an account',
  description:
    'Makes a user of the account, as `wagw user create --account` does. A password given is checked by the password policy and ' +
    'never answered back; without one, one is generated and answered in `password`, this once. An audit row names the token.',
  answers: {
    201: { ...userSchema, properties: { ...userSchema.properties, password: generatedPasswordField } },
  },
  errors: ['account_not_found', 'weak_password', 'email_already_registered'],
  handle: async ({ params, body, actor }, gateway) => {
    const created = await gateway.accounts.createUser(
      {
        accountId: params.id,
        email: body.email,
        ...(body.role !== undefined && { role: body.role }),
        ...(body.password !== undefined && { password: body.password }),
      },
      actor,
    );
    const body201 = {
      ...userJson(created.user),
      ...(created.generatedPassword !== undefined && { password: created.generatedPassword }),
    };
    return { statusCode: 201, body: body201 };
  },
});

const getUser = defineOperatorOperation({ params: userParams })({
  method: 'GET',
  path: '/admin/accounts/:id/users/:user_id',
  operationId: 'getAccountUser',
  summary: 'A user of an account',
  description: 'One user of the account; a user of another account is not found.',
  answers: { 200: userSchema },
  errors: ['account_not_found', 'user_not_found'],
  handle: async ({ params }, gateway) => {
    await gateway.accounts.getAccount(params.id);
    return ok(userJson(await gateway.team.getMember(params.id, params.user_id)));
  },
});

const updateUser = defineOperatorOperation({
  params: userParams,
  body: { type: 'object', required: ['role'], additionalProperties: false, properties: { role: roleField } },
})({
  method: 'PATCH',
  path: '/admin/accounts/:id/users/:user_id',
  operationId: 'updateAccountUser',
  summary: "Change a user's role",
  description:
    "Changes the user's role, as the account's Team page does; the account keeps at least one owner (409 last_owner). An audit " +
    'row names the token.',
  answers: { 200: userSchema },
  errors: ['account_not_found', 'user_not_found', 'last_owner'],
  handle: async ({ params, body, actor }, gateway) => {
    await gateway.accounts.getAccount(params.id);
    return ok(userJson(await gateway.team.changeRole(params.id, params.user_id, body.role, actor)));
  },
});

const resetPassword = defineOperatorOperation({
  params: userParams,
  body: { type: 'object', additionalProperties: false, properties: {} },
})({
  method: 'POST',
  path: '/admin/accounts/:id/users/:user_id/reset_password',
  operationId: 'resetAccountUserPassword',
  summary: "Reset a user's password",
  description:
    'Gives the user a new generated password, answered in `password` this once, and ends every sign-in session of the user, as the ' +
    "operator console's reset does. An audit row names the token (never the password).",
  answers: {
    200: {
      ...userSchema,
      required: [...userSchema.required, 'password'],
      properties: { ...userSchema.properties, password: { ...generatedPasswordField, description: 'The new password, shown this once.' } },
    },
  },
  errors: ['account_not_found', 'user_not_found'],
  handle: async ({ params, actor }, gateway) => {
    await gateway.accounts.getAccount(params.id);
    const member = await gateway.team.getMember(params.id, params.user_id);
    const { user, password } = await gateway.team.resetPassword(member.id, actor);
    return ok({ ...userJson(user), password });
  },
});

const removeUser = defineOperatorOperation({ params: userParams })({
  method: 'DELETE',
  path: '/admin/accounts/:id/users/:user_id',
  operationId: 'removeAccountUser',
  summary: 'Remove a user from an account',
  description:
    'Removes the user and their open invites, as the Team page does, and answers the user as they were. The account keeps at ' +
    'least one owner (409 last_owner). A user who is also an operator of the gateway is refused (409 user_is_operator) until ' +
    'their operator rights are taken away in the console. ' +
    'An audit row names the token.',
  answers: { 200: userSchema },
  errors: ['account_not_found', 'user_not_found', 'last_owner', 'user_is_operator'],
  handle: async ({ params, actor }, gateway) => {
    await gateway.accounts.getAccount(params.id);
    const removed = await gateway.team.removeMember(params.id, params.user_id, actor).catch(operatorUserRefused);
    return ok(userJson(removed));
  },
});

/** TeamService refuses, as `forbidden`, to let an account's owner remove an operator; the API names why. */
function operatorUserRefused(error: unknown): never {
  if (error instanceof AppError && error.code === 'forbidden') throw new AppError('user_is_operator', error.message);
  throw error;
}

export const userOperations = [listUsers, createUser, getUser, updateUser, resetPassword, removeUser];
