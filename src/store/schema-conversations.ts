// Table shapes of conversations around messages (replies, reactions, revisions, migration 0015)
// and of groups (migrations 0016 and 0017), as both dialects store them; see schema.ts.

/** What a reply quotes: our message when we have it, and WhatsApp's id for it always. */
export interface MessageRepliesTable {
  message_id: string;
  account_id: string;
  quoted_message_id: string | null;
  quoted_engine_id: string;
}

/** The group chat a message belongs to, with the group's subject when the message was stored (migration 0016). */
export interface MessageGroupsTable {
  message_id: string;
  account_id: string;
  group_id: string;
  group_subject: string;
  /** JSON array of the members mentioned; null when none. */
  mentions: string | null;
}

/** A group as one of our numbers last saw it; is_member is 0 once the number left or was removed. */
export interface NumberGroupsTable {
  number_id: string;
  account_id: string;
  group_id: string;
  subject: string;
  size: number;
  is_admin: number;
  is_member: number;
  updated_at: number;
}

/** A group of the simulated network, whole: its members are JSON [phone, role] pairs. */
export interface SandboxGroupsTable {
  group_id: string;
  subject: string;
  description: string | null;
  invite_code: string;
  members: string;
  updated_at: number;
}

/** The reactions a message has now: one per reactor, an empty emoji being none (so not stored). */
export interface MessageReactionsTable {
  message_id: string;
  account_id: string;
  /** The reactor's phone (or LID when the phone is unknown); our number's phone for ours. */
  reactor: string;
  from_us: number;
  emoji: string;
  reacted_at: number;
}

/** A text a message had before an edit or its revocation. */
export interface MessageRevisionsTable {
  id: string;
  message_id: string;
  account_id: string;
  /** 'edited' or 'revoked'. */
  kind: string;
  previous_text: string;
  /** Changed through the gateway or from our own phone, rather than by the other side. */
  from_us: number;
  changed_at: number;
}
