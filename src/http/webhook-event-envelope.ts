// What every webhook event's payload starts with (its type and the receiving webhook) and the
// fields many events share; the events' own schemas are in webhook-message-schemas.ts and
// webhook-number-schemas.ts.
import { ref } from './schema-refs.ts';

export const nullablePhone = (description: string) => ({ type: ['string', 'null'], description }) as const;
export const timestamp = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;
export const nullableGroup = {
  anyOf: [ref('ChatGroup'), { type: 'null' }],
  description: 'The group chat it happened in; null for a direct chat.',
} as const;

/** Every payload starts with these: the event's type and the webhook receiving it. */
export function eventProperties(event: string) {
  return {
    event: { type: 'string', const: event },
    webhook_id: { type: 'string', description: 'The webhook receiving this delivery.', examples: ['wh_01jd0k6x9g8p1b6m3v7t2q4w5e'] },
  } as const;
}
