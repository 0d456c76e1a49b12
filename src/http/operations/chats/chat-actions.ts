import { AppError } from '../../../domain/errors.ts';
import type { ChatChange } from '../../../engines/engine.ts';
import { MUTED_FOREVER } from '../../../messaging/chats.ts';
import { ref } from '../../schema-refs.ts';
import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone } from '../groups/group-number.ts';
import { CHAT_CHANGE_ERRORS, chatChangeBodySchema, chatParamsSchema, muteBodySchema, presentChats } from './chat-requests.ts';

// A chat's state, changed on WhatsApp (Baileys' chatModify, synced to the number's phone) and
// then recorded: archive, pin, mute, mark unread, and each one's undo. Eight operations of one
// shape, declared by one function so that they cannot drift apart.

const services = ['numbers', 'chats', 'media', 'mediaLinks'] as const;

function chatOperation(verb: string, operationId: string, summary: string, description: string, change: ChatChange) {
  return defineSessionOperation(
    { params: chatParamsSchema, body: chatChangeBodySchema },
    services,
  )({
    method: 'POST',
    scope: 'send',
    path: `/chats/:chat/${verb}`,
    operationId,
    summary,
    description: `${description} Answers the chat as it is now.`,
    tag: 'chats',
    answers: { 200: ref('Chat') },
    errors: CHAT_CHANGE_ERRORS,
    owner: ({ body }) => fromPhone(body.from_phone),
    handle: async ({ scope, params, number }, used) => {
      const chat = await used.chats.change(number, params.chat, change);
      return ok((await presentChats(used, scope, [chat]))[0]);
    },
  });
}

export const archiveChat = chatOperation('archive', 'archiveChat', 'Archive a chat', 'Moves the chat to the archive, on WhatsApp too.', {
  kind: 'archive',
  archived: true,
});
export const unarchiveChat = chatOperation(
  'unarchive',
  'unarchiveChat',
  'Take a chat out of the archive',
  'Brings an archived chat back to the chat list.',
  { kind: 'archive', archived: false },
);
export const pinChat = chatOperation(
  'pin',
  'pinChat',
  'Pin a chat',
  "Pins the chat to the top of the list on the number's phone (WhatsApp allows three pins).",
  { kind: 'pin', pinned: true },
);
export const unpinChat = chatOperation('unpin', 'unpinChat', 'Unpin a chat', "Takes the chat's pin away.", { kind: 'pin', pinned: false });
export const unmuteChat = chatOperation('unmute', 'unmuteChat', 'Unmute a chat', 'Lets the chat notify again.', {
  kind: 'mute',
  until: null,
});
export const markChatUnread = chatOperation(
  'mark_unread',
  'markChatUnread',
  'Mark a chat unread',
  "Marks the chat unread, as a reminder, on the number's phone too.",
  { kind: 'mark_unread', unread: true },
);
export const markChatRead = chatOperation('mark_read', 'markChatRead', 'Mark a chat read', "Clears the chat's unread mark and count.", {
  kind: 'mark_unread',
  unread: false,
});

export const muteChat = defineSessionOperation(
  { params: chatParamsSchema, body: muteBodySchema },
  services,
)({
  method: 'POST',
  scope: 'send',
  path: '/chats/:chat/mute',
  operationId: 'muteChat',
  summary: 'Mute a chat',
  description: "Silences the chat's notifications on the number's phone until `until`, or always. Answers the chat as it is now.",
  tag: 'chats',
  answers: { 200: ref('Chat') },
  errors: CHAT_CHANGE_ERRORS,
  check: ({ body }) => void muteEnd(body.until),
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ scope, params, body, number }, used) => {
    const chat = await used.chats.change(number, params.chat, { kind: 'mute', until: muteEnd(body.until) });
    return ok((await presentChats(used, scope, [chat]))[0]);
  },
});

function muteEnd(raw: string | undefined): Date {
  if (raw === undefined) return MUTED_FOREVER;
  const until = new Date(raw);
  if (!/(Z|[+-]\d{2}:\d{2})$/i.test(raw) || Number.isNaN(until.getTime()))
    throw new AppError('invalid_request', 'until must be an RFC 3339 time with its zone, e.g. 2026-12-01T09:00:00Z.', { field: 'until' });
  if (until.getTime() <= Date.now()) throw new AppError('invalid_request', 'until must be in the future.', { field: 'until' });
  return until;
}
