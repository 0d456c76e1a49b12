import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { roleOf, type Group } from '../../domain/groups.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import { parsePhoneField } from '../message-input.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponses } from '../schemas.ts';
import { groupSchema, groupSummarySchema } from '../group-schemas.ts';
import { notOwned, onNumberOwner, type OwnerAnswer } from './owner-calls.ts';

const bearer = [{ apiKey: [] }];

/** A group call as the public routes take it, and as a node forwards it to the number's owner. */
export type GroupRequest =
  | { op: 'create'; from_phone: string; subject: string; participants: string[] }
  | { op: 'list'; from_phone: string }
  | { op: 'get'; from_phone: string; id: string }
  | { op: 'participants'; from_phone: string; id: string; action: string; participants: string[] }
  | { op: 'update'; from_phone: string; id: string; subject?: string; description?: string | null }
  | { op: 'invite_link'; from_phone: string; id: string; revoke: boolean }
  | { op: 'leave'; from_phone: string; id: string };

const fromPhoneQuery = {
  type: 'object',
  required: ['from_phone'],
  properties: { from_phone: { type: 'string', description: 'One of your numbers: the groups as it sees them.' } },
  additionalProperties: false,
} as const;

function summary(group: Group, number: WhatsAppNumber) {
  const role = roleOf(group, number.phone);
  return { id: group.id, subject: group.subject, size: group.participants.length, is_admin: role === 'admin' || role === 'superadmin' };
}

function present(group: Group, number: WhatsAppNumber) {
  return { ...summary(group, number), description: group.description, participants: group.participants.map((participant) => ({ phone: participant.phone, lid: participant.lid, role: participant.role })) };
}

/** Runs a group call on this node, which serves from_phone. */
export async function groupCallHere(gateway: Gateway, scope: AccountScope, request: GroupRequest): Promise<OwnerAnswer> {
  const number = await gateway.numbers.findNumber(scope, parsePhoneField(request.from_phone, 'from_phone')).catch(notOwned);
  switch (request.op) {
    case 'create':
      return { statusCode: 201, body: present(await gateway.groups.create(number, request.subject, request.participants), number) };
    case 'list':
      return { statusCode: 200, body: { groups: (await gateway.groups.list(number)).map((group) => summary(group, number)) } };
    case 'get':
      return { statusCode: 200, body: present(await gateway.groups.get(number, request.id), number) };
    case 'participants': {
      const results = await gateway.groups.changeParticipants(number, request.id, request.action, request.participants);
      return { statusCode: 200, body: { action: request.action, results: results.map((result) => ({ phone: result.phone, outcome: result.outcome })) } };
    }
    case 'update':
      return { statusCode: 200, body: present(await gateway.groups.changeSettings(number, request.id, request), number) };
    case 'invite_link': {
      const { code, link } = await gateway.groups.inviteLink(number, request.id, request.revoke);
      return { statusCode: 200, body: { group_id: request.id, code, link } };
    }
    case 'leave':
      await gateway.groups.leave(number, request.id);
      return { statusCode: 200, body: { group_id: request.id, left: true } };
  }
}

const groupIdParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The group\'s id (…@g.us), URL-encoded.' } } } as const;
const fromPhoneBody = { from_phone: { type: 'string', description: 'One of your numbers, in the group.' } } as const;
const inviteLinkSchema = {
  type: 'object',
  required: ['group_id', 'code', 'link'],
  properties: { group_id: { type: 'string' }, code: { type: 'string' }, link: { type: 'string', description: 'https://chat.whatsapp.com/<code>: whoever has it may join.' } },
} as const;

/** POST /groups, GET /groups, GET and PATCH /groups/{id}, and the changes under /groups/{id}/…, each also under /api. */
export function registerGroupRoutes(app: FastifyInstance, gateway: Gateway): void {
  const onRequest = apiKeyAuthHook(gateway.authenticator);
  const route = async (scope: AccountScope, request: GroupRequest, reply: { status(code: number): { send(body: unknown): unknown } }) => {
    const fromPhone = parsePhoneField(request.from_phone, 'from_phone');
    const answer = await onNumberOwner(gateway, scope, fromPhone, () => groupCallHere(gateway, scope, request), '/internal/groups', request);
    return reply.status(answer.statusCode).send(answer.body);
  };

  for (const [prefix, suffix] of [['', ''], ['/api', 'Api']] as const) {
    app.post<{ Body: { from_phone: string; subject: string; participants: string[] } }>(
      `${prefix}/groups`,
      {
        onRequest,
        schema: {
          operationId: `createGroup${suffix}`,
          summary: 'Create a group',
          description: 'Creates a WhatsApp group with from_phone as its super admin and the participants added (up to 256; more can be added later). Answers 201 with the group and its id.',
          tags: ['groups'],
          security: bearer,
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['from_phone', 'subject', 'participants'],
            properties: {
              from_phone: { type: 'string', description: 'One of your numbers: the group\'s creator.' },
              subject: { type: 'string', description: 'The group\'s name, 1 to 100 characters.' },
              participants: { type: 'array', items: { type: 'string' }, description: 'Phones to add, with their country code.' },
            },
          },
          response: { 201: groupSchema, ...errorResponses(400, 401, 403, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'create', ...request.body }, reply),
    );

    app.get<{ Querystring: { from_phone: string } }>(
      `${prefix}/groups`,
      {
        onRequest,
        schema: {
          operationId: `listGroups${suffix}`,
          summary: 'List the groups a number belongs to',
          description: 'Every group from_phone is in, with its size and whether the number is an admin.',
          tags: ['groups'],
          security: bearer,
          querystring: fromPhoneQuery,
          response: { 200: { type: 'object', required: ['groups'], properties: { groups: { type: 'array', items: groupSummarySchema } } }, ...errorResponses(400, 401, 403, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'list', from_phone: request.query.from_phone }, reply),
    );

    app.get<{ Params: { id: string }; Querystring: { from_phone: string } }>(
      `${prefix}/groups/:id`,
      {
        onRequest,
        schema: {
          operationId: `getGroup${suffix}`,
          summary: 'Get a group with its participants',
          description: 'One group from_phone is in: its participants by phone (with their LID where WhatsApp gives one, and the LID alone when it gives no phone) and their roles. A group the number is not in is not found.',
          tags: ['groups'],
          security: bearer,
          params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
          querystring: fromPhoneQuery,
          response: { 200: groupSchema, ...errorResponses(400, 401, 403, 404, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'get', from_phone: request.query.from_phone, id: request.params.id }, reply),
    );
    app.post<{ Params: { id: string }; Body: { from_phone: string; action: string; participants: string[] } }>(
      `${prefix}/groups/:id/participants`,
      {
        onRequest,
        schema: {
          operationId: `changeGroupParticipants${suffix}`,
          summary: 'Add, remove, promote or demote participants',
          description:
            'from_phone must be an admin. Answers one outcome per phone, in order: done, already_member, not_member, privacy_restricted (their privacy settings let only contacts add them: send them the invite link), recently_left, not_on_whatsapp or refused. Members hear of it through group.updated.',
          tags: ['groups'],
          security: bearer,
          params: groupIdParams,
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['from_phone', 'action', 'participants'],
            properties: {
              ...fromPhoneBody,
              action: { type: 'string', enum: ['add', 'remove', 'promote', 'demote'] },
              participants: { type: 'array', items: { type: 'string' }, description: '1 to 50 phones, with their country code.' },
            },
          },
          response: {
            200: {
              type: 'object',
              required: ['action', 'results'],
              properties: {
                action: { type: 'string' },
                results: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['phone', 'outcome'],
                    properties: { phone: { type: 'string' }, outcome: { type: 'string', enum: ['done', 'already_member', 'not_member', 'privacy_restricted', 'recently_left', 'not_on_whatsapp', 'refused'] } },
                  },
                },
              },
            },
            ...errorResponses(400, 401, 403, 404, 429, 500, 503),
          },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'participants', ...request.body, id: request.params.id }, reply),
    );

    app.patch<{ Params: { id: string }; Body: { from_phone: string; subject?: string; description?: string | null } }>(
      `${prefix}/groups/:id`,
      {
        onRequest,
        schema: {
          operationId: `updateGroup${suffix}`,
          summary: 'Change a group\'s subject or description',
          description: 'from_phone must be an admin. An empty or null description clears it. Answers the group as it is now.',
          tags: ['groups'],
          security: bearer,
          params: groupIdParams,
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['from_phone'],
            properties: {
              ...fromPhoneBody,
              subject: { type: 'string', description: '1 to 100 characters.' },
              description: { type: ['string', 'null'], description: 'Up to 2,048 characters; empty or null clears it.' },
            },
          },
          response: { 200: groupSchema, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'update', ...request.body, id: request.params.id }, reply),
    );

    app.get<{ Params: { id: string }; Querystring: { from_phone: string } }>(
      `${prefix}/groups/:id/invite_link`,
      {
        onRequest,
        schema: {
          operationId: `getGroupInviteLink${suffix}`,
          summary: 'Get a group\'s invite link',
          description: 'from_phone must be an admin. Whoever has the link may join the group, until it is revoked.',
          tags: ['groups'],
          security: bearer,
          params: groupIdParams,
          querystring: fromPhoneQuery,
          response: { 200: inviteLinkSchema, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'invite_link', from_phone: request.query.from_phone, id: request.params.id, revoke: false }, reply),
    );

    app.post<{ Params: { id: string }; Body: { from_phone: string } }>(
      `${prefix}/groups/:id/invite_link/revoke`,
      {
        onRequest,
        schema: {
          operationId: `revokeGroupInviteLink${suffix}`,
          summary: 'Revoke a group\'s invite link',
          description: 'from_phone must be an admin. The old link stops working; answers the new one.',
          tags: ['groups'],
          security: bearer,
          params: groupIdParams,
          body: { type: 'object', additionalProperties: false, required: ['from_phone'], properties: fromPhoneBody },
          response: { 200: inviteLinkSchema, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'invite_link', from_phone: request.body.from_phone, id: request.params.id, revoke: true }, reply),
    );

    app.post<{ Params: { id: string }; Body: { from_phone: string } }>(
      `${prefix}/groups/:id/leave`,
      {
        onRequest,
        schema: {
          operationId: `leaveGroup${suffix}`,
          summary: 'Leave a group',
          description: 'from_phone leaves the group. Its messages stay in your history; sending there again answers not_group_member.',
          tags: ['groups'],
          security: bearer,
          params: groupIdParams,
          body: { type: 'object', additionalProperties: false, required: ['from_phone'], properties: fromPhoneBody },
          response: { 200: { type: 'object', required: ['group_id', 'left'], properties: { group_id: { type: 'string' }, left: { type: 'boolean' } } }, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
        },
      },
      async (request, reply) => route(keyScope(request), { op: 'leave', from_phone: request.body.from_phone, id: request.params.id }, reply),
    );
  }
}
