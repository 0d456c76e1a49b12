import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { fromPhone } from './groups/group-number.ts';
import { defineSessionOperation, ok } from './operation.ts';

// WhatsApp caps the chats a number may start with people who have not written to it, per cycle;
// past the cap it refuses first contacts with 475 (ADR 0058). This reads the cap as WhatsApp
// answers it now, through the number's session.

const nullableCount = { type: ['integer', 'null'], minimum: 0 } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

export const getNewChatQuota = defineSessionOperation(
  {
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone'],
      properties: { from_phone: { type: 'string', description: 'One of your numbers: its new-chat cap.' } },
    },
  },
  [],
)({
  method: 'GET',
  scope: 'read',
  path: '/new_chat_quota',
  operationId: 'getNewChatQuota',
  summary: "Read WhatsApp's cap on the new chats a number may start",
  description:
    'As WhatsApp answers it now: `status` none (far from the cap), first_warning, second_warning or capped (first contacts are ' +
    'refused with 475 until cycle_ends_at; replies to people who wrote first still go), with the quota, the part used and the cycle ' +
    'where WhatsApp gives them (null where it does not). WhatsApp answers the query with an error for some accounts: status is then ' +
    'unknown and `error` says what WhatsApp answered. A sandbox number is never capped.',
  tag: 'numbers',
  answers: {
    200: {
      type: 'object',
      required: ['from_phone', 'status', 'total', 'used', 'remaining', 'cycle_started_at', 'cycle_ends_at', 'error'],
      properties: {
        from_phone: { type: 'string' },
        status: { type: 'string', enum: ['none', 'first_warning', 'second_warning', 'capped', 'unknown'] },
        total: { ...nullableCount, description: 'New chats allowed in the cycle.' },
        used: { ...nullableCount, description: 'New chats started in the cycle.' },
        remaining: { ...nullableCount, description: 'total less used, when WhatsApp gave both.' },
        cycle_started_at: nullableTime,
        cycle_ends_at: { ...nullableTime, description: 'When the cycle ends and the count starts again.' },
        error: { type: ['string', 'null'], description: 'Why WhatsApp gave no quota, when status is unknown.' },
      },
    },
  },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ number, session }) => {
    const quota = await session.newChatQuota();
    return ok({
      from_phone: number.phone,
      status: quota.status,
      total: quota.total,
      used: quota.used,
      remaining: quota.total === null || quota.used === null ? null : Math.max(0, quota.total - quota.used),
      cycle_started_at: quota.cycleStartedAt?.toISOString() ?? null,
      cycle_ends_at: quota.cycleEndsAt?.toISOString() ?? null,
      error: quota.error,
    });
  },
});
