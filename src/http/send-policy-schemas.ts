import { MIN_CAP, PRESET_NAMES } from '../domain/send-policy.ts';
import { WAIT_REASONS } from '../messaging/governor/decision.ts';
import { presentNewChatQuota } from '../domain/new-chat-quota.ts';
import type { QueueView } from '../messaging/governor/send-queue-service.ts';
import { ref } from './schema-refs.ts';

/**
 * A count of 1 or more, or null for no cap. A cap of 0 is refused: "never send" is a pause
 * (POST /numbers/{id}/pause), and a cap no send can meet has no time at which a message may leave.
 */
const cap = (description: string) => ({ type: ['integer', 'null'], minimum: MIN_CAP, maximum: 1_000_000, description }) as const;
const milliseconds = (description: string) => ({ type: 'integer', minimum: 0, maximum: 7 * 86_400_000, description }) as const;

/** A send policy's figures (docs/send-governor.md); in a request every field is optional. */
const sendPolicyProperties = {
  min_gap_ms: milliseconds('The least time between two sends of the number.'),
  max_gap_ms: milliseconds('The most; each gap is drawn at random between the two (jitter). Defaults to min_gap_ms.'),
  per_minute: cap('Sends over any rolling minute; null for no cap.'),
  per_hour: cap('Sends over any rolling hour; null for no cap.'),
  per_day: cap('Sends over any rolling 24 hours; null for no cap.'),
  per_recipient_gap_ms: milliseconds('The least time between two sends to the same recipient.'),
  first_contacts_per_day: cap('Recipients the number never exchanged a message with, over any rolling 24 hours; null for no cap.'),
  warm_up: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['start', 'daily_increase'],
    properties: {
      start: { type: 'integer', minimum: MIN_CAP, maximum: 1_000_000 },
      daily_increase: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    },
    description:
      "A newly added number's first-contact cap: `start` on its first day and `daily_increase` more each day after, up to " +
      'first_contacts_per_day.',
  },
  quiet_hours: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['start', 'end', 'time_zone'],
    properties: {
      start: { type: 'string', maxLength: 5, examples: ['22:00'] },
      end: { type: 'string', maxLength: 5, examples: ['08:00'] },
      time_zone: { type: 'string', maxLength: 64, description: 'An IANA time zone name.', examples: ['Europe/Berlin'] },
    },
    description: 'No message leaves from start to end (local "HH:MM" in time_zone; may span midnight).',
  },
  typing_before_send: {
    type: 'boolean',
    description: 'Show "typing…" to the recipient before each send, for a time that grows with the text.',
  },
} as const;

/** What a request sets: a preset's name, a policy of its own, or null to inherit. */
export const sendPolicySettingInput = {
  anyOf: [
    { type: 'string', enum: [...PRESET_NAMES] },
    { type: 'object', additionalProperties: false, properties: sendPolicyProperties },
    { type: 'null' },
  ],
  description:
    'A preset (`off`, `standard`, `cautious`), a policy object, or null to inherit (the number from its account, the account from the ' +
    "gateway's WAGW_SEND_POLICY).",
} as const;

const sendPolicyComponent = {
  $id: 'SendPolicy',
  type: 'object',
  required: Object.keys(sendPolicyProperties),
  properties: sendPolicyProperties,
} as const;

const sendPolicySettingComponent = {
  $id: 'SendPolicySetting',
  type: 'object',
  description: 'The send policy in force and where it comes from.',
  required: ['source', 'preset', 'policy'],
  properties: {
    source: {
      type: 'string',
      enum: ['number', 'account', 'gateway'],
      description: "Whose setting it is: the number's own, its account's default, or the gateway's (WAGW_SEND_POLICY).",
    },
    preset: { type: ['string', 'null'], enum: [...PRESET_NAMES, null], description: "The preset's name; null for a policy of its own." },
    policy: { anyOf: [ref('SendPolicy'), { type: 'null' }], description: 'The figures; null when the governor is off.' },
  },
} as const;

const queuedEntry = {
  type: 'object',
  required: ['message_id', 'to', 'scheduled_for', 'expires_at', 'wait_reason', 'created_at'],
  properties: {
    message_id: { type: 'string' },
    to: { type: 'string', description: 'The recipient: a phone (E.164) or a group id.' },
    scheduled_for: {
      type: ['string', 'null'],
      format: 'date-time',
      description:
        'When it is expected to leave; while the number is paused, not before the pause lifts, and null when the pause lasts until ' +
        'someone resumes the number.',
    },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    wait_reason: { type: 'string', enum: [...WAIT_REASONS] },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** WhatsApp's cap on a number's new chats as the gateway last read it (ADR 0058). */
const newChatQuotaState = {
  type: ['object', 'null'],
  description:
    "WhatsApp's cap on the chats this number may start with people who never wrote to it, as last read (on connect, after a 475, " +
    'periodically, and as WhatsApp pushes it); null until it was first read (docs/send-governor.md#whatsapps-cap-on-new-chats).',
  required: ['status', 'total', 'used', 'remaining', 'cycle_ends_at', 'capped_until', 'source', 'error', 'read_at'],
  properties: {
    status: {
      type: 'string',
      enum: ['none', 'first_warning', 'second_warning', 'capped', 'unknown'],
      description: 'capped: first contacts wait (wait_reason new_chat_cap) until capped_until; unknown: WhatsApp did not answer.',
    },
    total: { type: ['integer', 'null'], description: "The cycle's quota of new chats, when WhatsApp said." },
    used: { type: ['integer', 'null'], description: 'How much of it WhatsApp counted as used when it was read.' },
    remaining: { type: ['integer', 'null'], description: 'total - used, when both are known.' },
    cycle_ends_at: { type: ['string', 'null'], format: 'date-time', description: 'When the cycle ends and the quota renews.' },
    capped_until: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'While the number is capped (a 475, or WhatsApp said so): until when first contacts wait; replies still go.',
    },
    source: {
      type: 'string',
      enum: ['whatsapp', 'fallback'],
      description: "whatsapp: the figures are WhatsApp's; fallback: the query failed (see error) and the send policy's own cap stands in.",
    },
    error: { type: ['string', 'null'], description: 'Why WhatsApp gave no quota, with source fallback.' },
    read_at: { type: 'string', format: 'date-time', description: 'When it was last read or pushed.' },
  },
} as const;

const numberQueueComponent = {
  $id: 'NumberQueue',
  type: 'object',
  required: ['number_id', 'phone', 'total', 'counts', 'next_scheduled_for', 'send_policy', 'new_chat_quota', 'messages', 'next_cursor'],
  properties: {
    number_id: { type: 'string' },
    phone: { type: 'string' },
    total: { type: 'integer', description: 'Messages waiting.' },
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: "Waiting messages by wait_reason; while the number is paused, all of them under `paused` (but a clear's `cancelling`).",
    },
    next_scheduled_for: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the next message is due to leave; null when none waits, or while the number is paused until someone resumes it.',
    },
    send_policy: ref('SendPolicySetting'),
    new_chat_quota: newChatQuotaState,
    messages: { type: 'array', items: queuedEntry, description: 'The waiting messages in the order they are due to leave.' },
    next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last.' },
  },
} as const;

export const sendPolicySchemaComponents = [sendPolicyComponent, sendPolicySettingComponent, numberQueueComponent] as const;

export function presentQueue(number: { id: string; phone: string }, view: QueueView) {
  return {
    number_id: number.id,
    phone: number.phone,
    total: view.total,
    counts: view.counts,
    next_scheduled_for: view.nextScheduledFor?.toISOString() ?? null,
    send_policy: view.policy,
    new_chat_quota: presentNewChatQuota(view.newChatQuota, new Date()),
    messages: view.messages.map((message) => ({
      message_id: message.id,
      to: message.toPhone,
      scheduled_for: message.scheduledFor?.toISOString() ?? null,
      expires_at: message.expiresAt?.toISOString() ?? null,
      wait_reason: message.waitReason,
      created_at: message.createdAt.toISOString(),
    })),
    next_cursor: view.nextCursor,
  };
}
