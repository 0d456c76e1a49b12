import type { Executor } from '../database.ts';
import type { ChatwootConversationsTable, ChatwootMessagesTable } from '../schema-integrations.ts';

/** The Chatwoot contact and conversation standing for a person talking to one of our numbers, in one inbox. */
export interface ChatwootConversation {
  webhookId: string;
  personKey: string;
  numberPhone: string;
  personPhone: string | null;
  personLid: string | null;
  contactId: number;
  sourceId: string;
  conversationId: number;
}

/** The first of `personKeys` the inbox has a conversation for: a person known by phone and by LID finds one either way. */
export async function findChatwootConversation(
  db: Executor,
  webhookId: string,
  personKeys: readonly string[],
): Promise<ChatwootConversation | undefined> {
  if (personKeys.length === 0) return undefined;
  const rows = await db
    .selectFrom('chatwoot_conversations')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('person_key', 'in', personKeys)
    .execute();
  const row = personKeys.map((key) => rows.find((candidate) => candidate.person_key === key)).find((found) => found !== undefined);
  return row && toConversation(row);
}

/** The person and number behind a Chatwoot conversation of the inbox, for an agent's reply. */
export async function findChatwootConversationById(
  db: Executor,
  webhookId: string,
  conversationId: number,
): Promise<ChatwootConversation | undefined> {
  const row = await db
    .selectFrom('chatwoot_conversations')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('conversation_id', '=', conversationId)
    // A person recorded under LID and phone has two rows; the phone's (written later) is the one to write to.
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return row && toConversation(row);
}

/** Records the conversation under the person's key; a key already recorded keeps what it had. */
export async function saveChatwootConversation(db: Executor, conversation: ChatwootConversation, at: Date): Promise<void> {
  await db
    .insertInto('chatwoot_conversations')
    .values({
      webhook_id: conversation.webhookId,
      person_key: conversation.personKey,
      number_phone: conversation.numberPhone,
      person_phone: conversation.personPhone,
      person_lid: conversation.personLid,
      contact_id: conversation.contactId,
      source_id: conversation.sourceId,
      conversation_id: conversation.conversationId,
      created_at: at.getTime(),
    })
    .onConflict((conflict) => conflict.columns(['webhook_id', 'person_key']).doNothing())
    .execute();
}

/** Forgets a conversation Chatwoot no longer has, so that the person's next message starts a new one. */
export async function forgetChatwootConversation(db: Executor, webhookId: string, conversationId: number): Promise<void> {
  await db.deleteFrom('chatwoot_conversations').where('webhook_id', '=', webhookId).where('conversation_id', '=', conversationId).execute();
}

/** A message of ours and its Chatwoot counterpart in one inbox. */
export interface ChatwootMessageLink {
  webhookId: string;
  messageId: string;
  chatwootMessageId: number;
  conversationId: number;
}

/** Maps the two ids both ways; a pair already recorded (a repeated callback, a retried delivery) is kept as it was. */
export async function linkChatwootMessage(db: Executor, link: ChatwootMessageLink, at: Date): Promise<void> {
  await db
    .insertInto('chatwoot_messages')
    .values({
      webhook_id: link.webhookId,
      message_id: link.messageId,
      chatwoot_message_id: link.chatwootMessageId,
      conversation_id: link.conversationId,
      created_at: at.getTime(),
    })
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}

export async function findChatwootLinkByMessage(
  db: Executor,
  webhookId: string,
  messageId: string,
): Promise<ChatwootMessageLink | undefined> {
  const row = await db
    .selectFrom('chatwoot_messages')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('message_id', '=', messageId)
    .executeTakeFirst();
  return row && toLink(row);
}

export async function findChatwootLinkByChatwootId(
  db: Executor,
  webhookId: string,
  chatwootMessageId: number,
): Promise<ChatwootMessageLink | undefined> {
  const row = await db
    .selectFrom('chatwoot_messages')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('chatwoot_message_id', '=', chatwootMessageId)
    .executeTakeFirst();
  return row && toLink(row);
}

function toConversation(row: ChatwootConversationsTable): ChatwootConversation {
  return {
    webhookId: row.webhook_id,
    personKey: row.person_key,
    numberPhone: row.number_phone,
    personPhone: row.person_phone,
    personLid: row.person_lid,
    contactId: Number(row.contact_id),
    sourceId: row.source_id,
    conversationId: Number(row.conversation_id),
  };
}

function toLink(row: ChatwootMessagesTable): ChatwootMessageLink {
  return {
    webhookId: row.webhook_id,
    messageId: row.message_id,
    chatwootMessageId: Number(row.chatwoot_message_id),
    conversationId: Number(row.conversation_id),
  };
}

/** A delivery of the inbox still waiting, with its event, for replaying the backlog in order. */
export interface WaitingChatwootDelivery {
  id: string;
  payload: string;
  /** Until when a worker holds it (ms), or null when none does. */
  claimedUntil: number | null;
}

/**
 * The inbox's deliveries still pending that came before `before` (by creation, then id: the
 * outbox's order), oldest first.
 */
export async function pendingDeliveriesBefore(
  db: Executor,
  webhookId: string,
  before: { createdAt: number; id: string },
  limit: number,
): Promise<WaitingChatwootDelivery[]> {
  return (
    await db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
      .select(['webhook_deliveries.id', 'webhook_events.payload', 'webhook_deliveries.claimed_until'])
      .where('webhook_deliveries.webhook_id', '=', webhookId)
      .where('webhook_deliveries.state', '=', 'pending')
      .where((eb) =>
        eb.or([
          eb('webhook_deliveries.created_at', '<', before.createdAt),
          eb.and([eb('webhook_deliveries.created_at', '=', before.createdAt), eb('webhook_deliveries.id', '<', before.id)]),
        ]),
      )
      .orderBy('webhook_deliveries.created_at')
      .orderBy('webhook_deliveries.id')
      .limit(limit)
      .execute()
  ).map((row) => ({ id: row.id, payload: row.payload, claimedUntil: row.claimed_until === null ? null : Number(row.claimed_until) }));
}

/** Makes pending deliveries nobody holds due now: their events are in Chatwoot already, and their next attempt only says so. */
export async function makeDeliveriesDueNow(db: Executor, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: at.getTime() })
    .where('id', 'in', ids)
    .where('state', '=', 'pending')
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at.getTime())]))
    .execute();
}
