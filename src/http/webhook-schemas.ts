import type { OpenAPIV3_2 } from '@fastify/swagger';
import {
  messageEditedEventComponent,
  messageEventComponent,
  messageMediaEventComponent,
  messageReactionEventComponent,
  messageRevokedEventComponent,
  messageStatusEventComponent,
  pollVoteEventComponent,
  webhookMediaComponent,
} from './webhook-message-schemas.ts';
import {
  callEventComponent,
  contactIdentityEventComponent,
  groupUpdatedEventComponent,
  numberCappedEventComponent,
  numberPausedEventComponent,
  numberResumedEventComponent,
  presenceUpdateEventComponent,
  sessionStatusEventComponent,
  testEventComponent,
} from './webhook-number-schemas.ts';

/**
 * The payload of every webhook event (docs/webhooks.md), as named shared schemas (webhook-message-schemas.ts,
 * webhook-number-schemas.ts), and the document's `webhooks` section that points at them. src/domain/webhooks.ts builds the payloads;
 * test/http/openapi.test.ts checks real deliveries against these schemas.
 */

/** Each event's name, the component of its payload, and when it is sent. */
const events = [
  ['message', 'MessageEvent', 'A message arrived on one of your numbers.'],
  ['message.media', 'MessageMediaEvent', 'The late file of a message: stored at last, or given up on.'],
  ['message.status', 'MessageStatusEvent', 'A message you sent changed state.'],
  ['message.reaction', 'MessageReactionEvent', 'A reaction was set or taken away.'],
  ['message.edited', 'MessageEditedEvent', 'A message was edited.'],
  ['message.revoked', 'MessageRevokedEvent', 'A message was deleted for everyone.'],
  ['session.status', 'SessionStatusEvent', "A number's WhatsApp session changed state."],
  ['group.updated', 'GroupUpdatedEvent', 'A group of your numbers changed.'],
  ['number.paused', 'NumberPausedEvent', 'A number of yours holds its sends.'],
  ['number.resumed', 'NumberResumedEvent', 'A paused number of yours sends again.'],
  ['number.capped', 'NumberCappedEvent', 'WhatsApp capped the new chats a number of yours may start.'],
  ['contact.identity', 'ContactIdentityEvent', 'A LID got its phone.'],
  ['call', 'CallEvent', 'A call to one of your numbers rang, or ended.'],
  ['presence.update', 'PresenceUpdateEvent', 'A contact your number subscribed to changed presence.'],
  ['poll.vote', 'PollVoteEvent', 'Someone voted on a poll, changed or took back their vote.'],
  ['test', 'TestEvent', 'An operator sent a test event.'],
] as const;

export const webhookSchemaComponents = [
  webhookMediaComponent,
  messageEventComponent,
  messageMediaEventComponent,
  messageStatusEventComponent,
  messageReactionEventComponent,
  messageEditedEventComponent,
  messageRevokedEventComponent,
  sessionStatusEventComponent,
  groupUpdatedEventComponent,
  numberPausedEventComponent,
  numberResumedEventComponent,
  numberCappedEventComponent,
  contactIdentityEventComponent,
  callEventComponent,
  presenceUpdateEventComponent,
  pollVoteEventComponent,
  testEventComponent,
] as const;

const signatureHeaders = [
  ['webhook-id', "The delivery's id: the same on every retry of it, so that a receiver can drop repeats."],
  ['webhook-timestamp', 'Unix seconds when this attempt was signed.'],
  [
    'webhook-signature',
    'Standard Webhooks signatures: "v1,<base64 HMAC-SHA256>" of "<webhook-id>.<webhook-timestamp>.<body>" under the webhook\'s secret, ' +
      'space-separated while a secret rotates.',
  ],
] as const;

/** The document's OpenAPI 3.1 `webhooks`: what the gateway POSTs to a receiver, per event. */
type Webhooks = NonNullable<OpenAPIV3_2.Document['webhooks']>;

export function webhooksSection(): Webhooks {
  return Object.fromEntries(
    events.map(([event, component, summary]) => [
      event,
      {
        post: {
          operationId: `on${component}`,
          summary,
          description:
            `Delivered to webhooks subscribed to ${event === 'message.media' ? 'message' : event}; signed as Standard ` +
            `Webhooks (docs/webhooks.md). Answer 2xx within the timeout, or the delivery is retried.`,
          tags: ['webhooks'],
          security: [{ webhookSignature: [] }],
          parameters: signatureHeaders.map(([name, description]) => ({
            name,
            in: 'header' as const,
            required: true,
            description,
            schema: { type: 'string' as const },
          })),
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${component}` } } } },
          responses: { '2XX': { description: 'Received; any 2xx ends the delivery.' } },
        },
      },
    ]),
  );
}
