import type { ChatSummary } from '../messaging/chats.ts';
import { ref } from './schema-refs.ts';

/** A chat of a number as the chat list shows it: the `Chat` component. */
const chatComponent = {
  $id: 'Chat',
  type: 'object',
  description:
    'A chat of one of your numbers: direct (with one person, by phone and LID where known) or a group, with its last message and its ' +
    'state.',
  required: [
    'chat_id',
    'kind',
    'phone',
    'lid',
    'group',
    'last_message',
    'last_activity_at',
    'unread_count',
    'marked_unread',
    'archived',
    'pinned',
    'pinned_at',
    'muted',
    'muted_until',
  ],
  properties: {
    chat_id: {
      type: 'string',
      description: "What names the chat in /chats/{chat}: the person's phone, their LID while the phone is unknown, or the group id.",
    },
    kind: { type: 'string', enum: ['direct', 'group'] },
    phone: {
      type: ['string', 'null'],
      description: 'The other side of a direct chat (E.164); null in a group, or while WhatsApp has named the person only by LID.',
    },
    lid: { type: ['string', 'null'], description: "The other side's LID, where known; null in a group." },
    group: { anyOf: [ref('ChatGroup'), { type: 'null' }], description: 'The group of a group chat; null for a direct one.' },
    last_message: ref('Message'),
    last_activity_at: {
      type: 'string',
      format: 'date-time',
      description: "When the last message was sent or received: the list's order, latest first.",
    },
    unread_count: {
      type: 'integer',
      minimum: 0,
      description: 'Messages received since the chat was last read (mark_read, or a read mark on a message).',
    },
    marked_unread: { type: 'boolean', description: 'Marked unread by hand (POST /chats/{chat}/mark_unread).' },
    archived: { type: 'boolean' },
    pinned: { type: 'boolean' },
    pinned_at: { type: ['string', 'null'], format: 'date-time' },
    muted: { type: 'boolean', description: 'Muted now: muted_until is in the future.' },
    muted_until: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the mute ends; 9999-12-31T23:59:59.999Z for always; null when never muted or unmuted.',
    },
  },
} as const;

export const chatSchemaComponents = [chatComponent] as const;

export function presentChatSummary(chat: ChatSummary, presentedMessage: unknown, now = new Date()) {
  return {
    chat_id: chat.chatId,
    kind: chat.group === null ? 'direct' : 'group',
    phone: chat.phone,
    lid: chat.lid,
    group: chat.group === null ? null : { id: chat.group.id, subject: chat.group.subject },
    last_message: presentedMessage,
    last_activity_at: chat.lastActivityAt.toISOString(),
    unread_count: chat.unreadCount,
    marked_unread: chat.markedUnread,
    archived: chat.archived,
    pinned: chat.pinnedAt !== null,
    pinned_at: chat.pinnedAt?.toISOString() ?? null,
    muted: chat.mutedUntil !== null && chat.mutedUntil > now,
    muted_until: chat.mutedUntil?.toISOString() ?? null,
  };
}
