import { AppError } from '../../domain/errors.ts';
import { engineKinds, type WhatsAppNumber } from '../../domain/model.ts';
import { pauseReasons, presentPause, type NumberPause } from '../../domain/number-pauses.ts';

export const pausedSchema = {
  anyOf: [
    {
      type: 'object',
      required: ['reason', 'since', 'until'],
      properties: {
        reason: { type: 'string', enum: pauseReasons },
        since: { type: 'string', format: 'date-time' },
        until: { type: ['string', 'null'], format: 'date-time', description: 'When it resumes by itself; null when that is not known.' },
      },
    },
    { type: 'null' },
  ],
  description:
    'Set while the number holds its sends (docs/number-pauses.md): sends are refused with 503 number_paused until it resumes at `until`, ' +
    'or by POST /numbers/{id}/resume.',
} as const;

export const numberSchema = {
  type: 'object',
  required: [
    'number_id',
    'phone',
    'engine',
    'status',
    'status_reason',
    'can_send',
    'auto_read',
    'reject_calls',
    'call_reply_text',
    'show_online',
    'paused',
    'created_at',
  ],
  properties: {
    number_id: { type: 'string' },
    phone: { type: 'string', description: 'E.164: what from_phone names.' },
    engine: {
      type: 'string',
      enum: engineKinds,
      description:
        "sandbox numbers live on the simulated network; baileys ones are real WhatsApp numbers, linked as a phone's companion; cloud ones are on Meta's Cloud API (docs/cloud-api.md).",
    },
    status: {
      type: 'string',
      description:
        "The WhatsApp session's state, as its node last recorded it: connected, connecting, disconnected, logged_out, link_expired, " +
        'conflict, failed or not_linked.',
    },
    status_reason: { type: ['string', 'null'], description: 'Why, when there is more to say.' },
    can_send: {
      type: 'boolean',
      description: 'Whether a send from this number would be handed to WhatsApp now (status connected, and not paused).',
    },
    auto_read: {
      type: 'boolean',
      description: 'Whether messages it receives are marked read as soon as they are stored (PATCH /numbers/{id}).',
    },
    reject_calls: { type: 'boolean', description: 'Whether calls to it are rejected as they ring (PATCH /numbers/{id}).' },
    call_reply_text: { type: ['string', 'null'], description: 'What a caller whose call was rejected is sent; null for nothing.' },
    show_online: { type: 'boolean', description: 'Whether it shows itself online to its contacts (PATCH /numbers/{id}).' },
    paused: pausedSchema,
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

export function presentNumber(number: WhatsAppNumber, pause: NumberPause | undefined) {
  return {
    number_id: number.id,
    phone: number.phone,
    engine: number.engine,
    status: number.status,
    status_reason: number.statusReason,
    can_send: number.status === 'connected' && pause === undefined,
    auto_read: number.autoRead,
    reject_calls: number.rejectCalls,
    call_reply_text: number.callReplyText,
    show_online: number.showOnline,
    paused: presentPause(pause),
    created_at: number.createdAt.toISOString(),
  };
}

/** number_not_found for the {id} of a path, naming it, as every other refusal names its field. */
export function unknownNumberId(error: unknown): never {
  if (error instanceof AppError && error.code === 'number_not_found' && error.meta === undefined)
    throw new AppError('number_not_found', `${error.message} The path's {id} is a number_id or a phone of your account.`, { field: 'id' });
  throw error;
}
