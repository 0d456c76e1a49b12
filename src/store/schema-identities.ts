// Table shapes of people and chats (migration 0021, ADR 0032), as both dialects store them; see schema.ts.
import type { ColumnType } from 'kysely';

/** A person one of our numbers knows, by LID, phone or both: the number's LID-to-phone map. */
export interface ContactsTable {
  id: string;
  number_id: string;
  account_id: string;
  lid: string | null;
  phone: string | null;
  whatsapp_name: string | null;
  saved: ColumnType<number, number | undefined, number>;
  identity_source: string | null;
  identity_learned_at: number | null;
  last_message_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A chat of one of our numbers: the other side (phone, LID or group), its last message and its state. */
export interface ChatsTable {
  number_id: string;
  account_id: string;
  chat_id: string;
  last_message_id: string;
  last_activity_at: number;
  unread_count: ColumnType<number, number | undefined, number>;
  marked_unread: ColumnType<number, number | undefined, number>;
  archived: ColumnType<number, number | undefined, number>;
  pinned_at: number | null;
  muted_until: number | null;
}

/** What a number last heard of a contact's presence (migration 0028); contact is a phone, or a LID while its phone is unknown. */
export interface ContactPresencesTable {
  number_id: string;
  contact: string;
  presence: string;
  group_id: string | null;
  last_seen_at: number | null;
  heard_at: number;
}
