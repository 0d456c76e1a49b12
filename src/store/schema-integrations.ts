// Table shapes of integrations: Chatwoot's links between its contacts, conversations and messages
// and ours (migration 0042), as both dialects store them; see schema.ts.

/** Which Chatwoot contact and conversation stand for a person talking to a number, per inbox (migration 0042). */
export interface ChatwootConversationsTable {
  webhook_id: string;
  person_key: string;
  number_phone: string;
  person_phone: string | null;
  person_lid: string | null;
  contact_id: number;
  source_id: string;
  conversation_id: number;
  created_at: number;
}

/** Which Chatwoot message is which of ours, per inbox, both ways (migration 0042). */
export interface ChatwootMessagesTable {
  webhook_id: string;
  message_id: string;
  chatwoot_message_id: number;
  conversation_id: number;
  created_at: number;
}
