import { locateOnItsNumber, MESSAGE_ACTION_ERRORS, messageIdParams, messageOwner } from './message-actions.ts';
import { defineOperation, ok } from './operation.ts';

const readResponseSchema = {
  type: 'object',
  required: ['message_id', 'marked_read', 'read_at'],
  properties: {
    message_id: { type: 'string' },
    marked_read: {
      type: 'array',
      items: { type: 'string' },
      description:
        'The messages now marked read, oldest first: this one and the unread ones before it from the same sender (at most 100). Empty ' +
        'when all were read already.',
    },
    read_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const markMessageRead = defineOperation({ params: messageIdParams }, ['messageActions'])({
  method: 'POST',
  scope: 'send',
  path: '/messages/:id/read',
  operationId: 'markMessageRead',
  summary: 'Mark a received message read',
  description:
    'Marks a received message, and the unread ones before it from the same sender, read: the sender sees blue ticks (if both sides show ' +
    'read receipts). Answers which messages were marked.',
  tag: 'messages',
  answers: { 200: readResponseSchema },
  errors: MESSAGE_ACTION_ERRORS,
  owner: ({ scope, params }, services) => messageOwner(services, scope, params.id),
  handle: async ({ scope, params }, { messageActions }) => {
    const at = new Date();
    const { message, number } = await locateOnItsNumber({ messageActions }, scope, params.id);
    const marked = await messageActions.markRead(number, message);
    return ok({
      message_id: message.id,
      marked_read: marked.map((each) => each.id),
      read_at: (marked.at(-1)?.times?.read ?? at).toISOString(),
    });
  },
});
