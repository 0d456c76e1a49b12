import { defineOperation, ok } from '../operation.ts';
import { groupNumber } from '../groups/group-number.ts';
import { CHAT_LIST_ERRORS, chatPageSchema, listChatsQuerySchema, presentChats } from './chat-requests.ts';

export const listChats = defineOperation({ query: listChatsQuerySchema }, ['numbers', 'chats', 'media', 'mediaLinks'])({
  method: 'GET',
  scope: 'read',
  path: '/chats',
  operationId: 'listChats',
  summary: "List a number's chats, latest first",
  description:
    'Each chat of from_phone, direct or group, with its last message, unread count, and whether it is archived, pinned or muted; latest ' +
    'activity first, a page at a time: pass next_cursor as cursor for the next page. A person is one chat, whether their messages ' +
    "came by phone or by LID. Read from the gateway's own records.",
  tag: 'chats',
  answers: { 200: chatPageSchema },
  errors: CHAT_LIST_ERRORS,
  handle: async ({ scope, query }, services) => {
    const number = await groupNumber(services, scope, query.from_phone);
    const page = await services.chats.page(number, query.cursor, query.limit ?? 50, query.offset ?? 0);
    return ok({ chats: await presentChats(services, scope, page.chats), next_cursor: page.nextCursor ?? null });
  },
});
