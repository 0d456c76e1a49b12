// Table shapes of conversations around messages (replies, reactions, revisions, migration 0015),
// as both dialects store them; see schema.ts.

/** What a reply quotes: our message when we have it, and WhatsApp's id for it always. */
export interface MessageRepliesTable {
  message_id: string;
  account_id: string;
  quoted_message_id: string | null;
  quoted_engine_id: string;
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
