import type { AuditEvent } from '../../domain/audit.ts';
import { ok } from '../operations/operation.ts';
import { defineOperatorOperation } from './operator-operation.ts';

const DEFAULT_EVENTS = 100;
const MAX_EVENTS = 500;

const auditEventSchema = {
  type: 'object',
  required: ['id', 'at', 'account_id', 'actor', 'action', 'target_id', 'details'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'aud_…' },
    at: { type: 'string', format: 'date-time' },
    account_id: { type: ['string', 'null'], description: 'The account acted in; null for an action on the gateway as a whole.' },
    actor: {
      type: 'object',
      required: ['kind', 'id', 'label', 'address'],
      additionalProperties: false,
      properties: {
        kind: {
          type: 'string',
          enum: ['user', 'api_key', 'operator_token', 'cli', 'system'],
          description: 'How the actor came: the dashboard (user), an API key, an operator token, the CLI, or the gateway itself.',
        },
        id: { type: ['string', 'null'], description: "The user's, key's or token's id; null for the CLI and the gateway." },
        label: { type: ['string', 'null'], description: "An email, or a key's or token's name and hint (never the secret)." },
        address: { type: ['string', 'null'], description: "The client's address as the gateway saw it; null off HTTP." },
      },
    },
    action: { type: 'string', description: 'What was done: webhook.created, api_key.revoked, operator_token.created, …' },
    target_id: { type: ['string', 'null'], description: 'The object acted on.' },
    details: {
      type: ['object', 'null'],
      description: 'Small facts about the action (what changed), never a secret.',
      additionalProperties: true,
    },
  },
} as const;

function presentAuditEvent(event: AuditEvent) {
  return {
    id: event.id,
    at: event.at.toISOString(),
    account_id: event.accountId,
    actor: { kind: event.actor.kind, id: event.actor.id, label: event.actor.label, address: event.actor.address },
    action: event.action,
    target_id: event.targetId,
    details: event.details,
  };
}

const auditQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    account_id: { type: 'string', maxLength: 64, description: "One account's actions only (acc_…)." },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_EVENTS,
      default: DEFAULT_EVENTS,
      description: `How many, newest first (1 to ${MAX_EVENTS}, ${DEFAULT_EVENTS} by default).`,
    },
  },
} as const;

const listAuditEvents = defineOperatorOperation({ query: auditQuery })({
  method: 'GET',
  path: '/admin/audit_events',
  operationId: 'listAuditEvents',
  summary: 'The audit log',
  description:
    'Management actions, newest first: who (a dashboard user, an API key, an operator token, the CLI), from which address, did ' +
    'what to which object, and when (docs/adr/0053-audit-log.md). Every account, or one with account_id.',
  answers: { 200: { type: 'object', required: ['events'], properties: { events: { type: 'array', items: auditEventSchema } } } },
  errors: [],
  handle: async ({ scope, query }, gateway) => {
    const events = await gateway.audit.list(scope, {
      accountId: query.account_id ?? null,
      limit: query.limit ?? DEFAULT_EVENTS,
    });
    return ok({ events: events.map(presentAuditEvent) });
  },
});

export const auditOperations = [listAuditEvents];
