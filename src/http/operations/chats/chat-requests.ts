import type { ErrorCode } from '../../../domain/errors.ts';
import type { ChatSummary } from '../../../messaging/chats.ts';
import type { AccountScope } from '../../../domain/tenant-scope.ts';
import { presentChatSummary } from '../../chat-schemas.ts';
import { ref } from '../../schema-refs.ts';
import { pageOffsetParameter } from '../../schemas.ts';
import { KEYED_ERRORS, NUMBER_READ_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from '../error-responses.ts';
import { presentPage } from '../message-presenting.ts';
import type { OperationServices } from '../services.ts';

export const CHAT_LIST_ERRORS = NUMBER_READ_ERRORS;
/** A change acts through the number's session, on a chat it has. */
export const CHAT_CHANGE_ERRORS = [
  ...KEYED_ERRORS,
  ...REQUEST_ERRORS,
  ...SESSION_ERRORS,
  'invalid_phone_number',
  'chat_not_found',
] as const satisfies readonly ErrorCode[];

export const listChatsQuerySchema = {
  type: 'object',
  required: ['from_phone'],
  properties: {
    from_phone: { type: 'string', description: 'One of your numbers: its chats.' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'How many chats a page holds: 1 to 100; 50 by default.' },
    cursor: { type: 'string', description: 'next_cursor of the previous page.' },
    offset: pageOffsetParameter,
  },
  additionalProperties: false,
} as const;

export const chatPageSchema = {
  type: 'object',
  required: ['chats', 'next_cursor'],
  properties: {
    chats: { type: 'array', items: ref('Chat') },
    next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next (older) page; null on the last page.' },
  },
} as const;

export const chatParamsSchema = {
  type: 'object',
  required: ['chat'],
  properties: {
    chat: {
      type: 'string',
      description:
        "The chat: the person's phone (E.164) or LID, or the group id (…@g.us), URL-encoded. A LID finds the person's chat by phone once " +
        'the gateway knows it.',
    },
  },
} as const;

export const chatChangeBodySchema = {
  type: 'object',
  required: ['from_phone'],
  properties: { from_phone: { type: 'string', description: 'One of your numbers: the chat is one of its chats.' } },
  additionalProperties: false,
} as const;

export const muteBodySchema = {
  type: 'object',
  required: ['from_phone'],
  properties: {
    from_phone: chatChangeBodySchema.properties.from_phone,
    until: {
      type: 'string',
      format: 'date-time',
      description: 'When the mute ends (RFC 3339, in the future); without it, the chat is muted always.',
    },
  },
  additionalProperties: false,
} as const;

/** Chats as the API answers them, each last message as GET /messages shows it. */
export async function presentChats(services: Pick<OperationServices, 'media' | 'mediaLinks'>, scope: AccountScope, chats: ChatSummary[]) {
  const messages = await presentPage(
    services,
    scope,
    chats.map((chat) => chat.lastMessage),
  );
  return chats.map((chat, index) => presentChatSummary(chat, messages[index]));
}
