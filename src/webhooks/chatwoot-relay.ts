import { KeyedQueue } from '../domain/keyed-queue.ts';
import type { Logger } from 'pino';
import type { EventPayload } from '../domain/webhooks.ts';
import type { Store } from '../store/database.ts';
import type { ClaimedDelivery } from '../store/repositories/delivery-claims.ts';
import {
  findChatwootConversation,
  findChatwootLinkByMessage,
  forgetChatwootConversation,
  linkChatwootMessage,
  makeDeliveriesDueNow,
  pendingDeliveriesBefore,
  saveChatwootConversation,
  type ChatwootConversation,
} from '../store/repositories/chatwoot.ts';
import { findWebhookForDelivery } from '../store/repositories/webhooks.ts';
import type { AttemptResult } from './webhook-http.ts';
import { ChatwootRequestError, type ChatwootApi, type ChatwootAttachment, type ChatwootTarget } from './chatwoot-api.ts';

/** Reads a stored file of an account for Chatwoot; undefined when it is no longer kept. */
export type ChatwootMediaReader = (accountId: string, mediaId: string) => Promise<ChatwootAttachment | undefined>;

/** A Chatwoot inbox's delivery, as the worker hands it over: the claim, the event, and the opened access token. */
export interface ChatwootDelivery {
  delivery: ClaimedDelivery;
  event: EventPayload;
  apiAccessToken: string;
}

type Outcome = { done: string };

/**
 * How many earlier deliveries one attempt replays before its own. More wait for the next
 * attempt; a replay of this many takes well under the webhook timeout on any desk that answers.
 */
const REPLAY_BATCH = 50;

/** Our statuses as Chatwoot's ticks; the rest (unknown) say nothing Chatwoot shows. */
const TICKS: Record<string, 'sent' | 'delivered' | 'read' | 'failed'> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
  cancelled: 'failed',
  expired: 'failed',
};

/**
 * Turns a Chatwoot inbox's outbox deliveries into Chatwoot Application API calls (ADR 0067):
 * a person's message becomes an incoming message of their conversation (contact, contact inbox
 * and conversation created on first contact, and remembered), and a status of an agent's reply
 * becomes its ticks. Every failure is an attempt result: the outbox retries it on the webhook
 * schedule, so an outage of Chatwoot loses nothing.
 *
 * Order: retries are jittered, so after an outage the outbox would offer an inbox's deliveries
 * in any order. Each attempt therefore first replays the inbox's earlier deliveries still
 * pending, oldest first, and only then its own: whichever comes first carries the backlog in
 * order. Each event is posted once, because what is in Chatwoot is recorded (chatwoot_messages)
 * and found again when the earlier delivery's own attempt comes; those are made due at once.
 * One inbox's attempts run one at a time on a node, so two first messages of one person cannot
 * create two contacts. An earlier delivery this node holds (its attempt queued behind this one)
 * is replayed too; one another node holds is that node's to post, and this one does not overtake
 * it: the attempt goes back to the outbox, to come after it.
 */
export class ChatwootRelay {
  private readonly inboxes = new KeyedQueue();
  /** The deliveries this node holds and has queued an attempt for, by delivery id. */
  private readonly held = new Set<string>();

  constructor(
    private readonly options: {
      store: Store;
      api: ChatwootApi;
      readMedia: ChatwootMediaReader;
      timeoutMs: number;
      logger: Logger;
    },
  ) {}

  deliver(work: ChatwootDelivery): Promise<AttemptResult> {
    const { webhookId } = work.delivery;
    this.held.add(work.delivery.id);
    return this.inboxes.run(webhookId, () => this.attempt(work)).finally(() => this.held.delete(work.delivery.id));
  }

  close(): void {
    this.options.api.close();
  }

  private async attempt(work: ChatwootDelivery): Promise<AttemptResult> {
    const startedAt = performance.now();
    const finish = (result: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({
      ...result,
      durationMs: Math.round(performance.now() - startedAt),
    });
    // Waiting behind the inbox's earlier deliveries may have used up this one's claim: it goes
    // back to the outbox (as a failed attempt) rather than run where another node may run it too.
    if (work.delivery.claimedUntil - Date.now() < this.options.timeoutMs) {
      return finish(failure('timeout', 'Waited too long behind the inbox’s earlier deliveries; tried again later.'));
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.options.timeoutMs);
    try {
      const outcome = await this.relayInOrder(work, deadline.signal);
      return finish({ statusCode: 200, responseExcerpt: outcome.done, error: null, errorDetail: null, retryAfterMs: null });
    } catch (error) {
      if (!(error instanceof ChatwootRequestError)) throw error;
      return finish({
        statusCode: error.statusCode,
        responseExcerpt: error.excerpt,
        error: error.statusCode === null ? (error.kind ?? 'network') : null,
        errorDetail: error.message,
        retryAfterMs: null,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Replays the inbox's earlier pending deliveries, oldest first, then relays this one. */
  private async relayInOrder(work: ChatwootDelivery, signal: AbortSignal): Promise<Outcome> {
    const { delivery } = work;
    const db = this.options.store.db;
    const now = Date.now();
    const earlier = await pendingDeliveriesBefore(db, delivery.webhookId, delivery, REPLAY_BATCH);
    const elsewhere = earlier.find((waiting) => waiting.claimedUntil !== null && waiting.claimedUntil >= now && !this.held.has(waiting.id));
    if (elsewhere !== undefined) {
      throw new ChatwootRequestError(
        null,
        'internal',
        'An earlier message of this inbox is being posted by another node; this one follows it.',
        null,
      );
    }
    for (const waiting of earlier) {
      await this.relay({ ...work, delivery: { ...delivery, id: waiting.id }, event: JSON.parse(waiting.payload) as EventPayload }, signal);
    }
    if (earlier.length === REPLAY_BATCH) {
      throw new ChatwootRequestError(null, 'internal', `Replayed ${REPLAY_BATCH} earlier deliveries first; this one follows them.`, null);
    }
    const outcome = await this.relay(work, signal);
    await makeDeliveriesDueNow(
      db,
      earlier.map((waiting) => waiting.id),
      new Date(),
    );
    return earlier.length === 0 ? outcome : { done: `${outcome.done} (after ${earlier.length} earlier ones)` };
  }

  private async relay(work: ChatwootDelivery, signal: AbortSignal): Promise<Outcome> {
    const { event } = work;
    const inbox = work.delivery.chatwoot!;
    const target: ChatwootTarget = { baseUrl: work.delivery.url, accountId: inbox.accountId, apiAccessToken: work.apiAccessToken };
    switch (event.event) {
      case 'message':
      case 'message.media':
        return this.relayIncoming(work, target, signal);
      case 'message.status':
        return this.relayStatus(work, target, signal);
      case 'test':
        // The operator's test event proves the URL, the account and the token: a search any agent may make.
        await this.options.api.searchContacts(target, 'wa-gateway', signal);
        return { done: 'Chatwoot accepted the access token.' };
      default:
        return { done: `Chatwoot inboxes take no ${event.event} events.` };
    }
  }

  private async relayIncoming(work: ChatwootDelivery, target: ChatwootTarget, signal: AbortSignal): Promise<Outcome> {
    const { event, delivery } = work;
    const messageId = String(event.message_id);
    // Our own messages are not copied: an agent's reply is in Chatwoot already, and a message
    // sent another way would come back to us through the inbox's callback as a reply to send.
    if (event.event === 'message' && event.status !== 'received') return { done: 'Not a message received: nothing to do.' };
    const linkedId = event.event === 'message' ? messageId : `${messageId}:media`;
    const store = this.options.store.db;
    const linked = await findChatwootLinkByMessage(store, delivery.webhookId, linkedId);
    if (linked !== undefined) return { done: `Already Chatwoot message ${linked.chatwootMessageId}.` };
    const attachment = await this.attachmentOf(delivery.webhookId, event);
    // A file that came late (message.media) is its own message; one still unavailable adds nothing.
    if (event.event === 'message.media' && attachment === undefined) return { done: 'No file to add.' };
    const conversation = await this.conversationFor(work, target, signal);
    const content = event.event === 'message' ? contentOf(event, attachment) : '';
    let chatwootMessageId: number;
    try {
      chatwootMessageId = await this.options.api.createMessage(
        target,
        conversation.conversationId,
        { content, messageType: 'incoming', ...(attachment !== undefined && { attachment }) },
        signal,
      );
    } catch (error) {
      // The conversation was deleted in Chatwoot: the retry starts a new one.
      if (error instanceof ChatwootRequestError && error.statusCode === 404) {
        await forgetChatwootConversation(store, delivery.webhookId, conversation.conversationId);
      }
      throw error;
    }
    const link = { webhookId: delivery.webhookId, messageId: linkedId, chatwootMessageId, conversationId: conversation.conversationId };
    await linkChatwootMessage(store, link, new Date());
    return { done: `Chatwoot message ${chatwootMessageId} in conversation ${conversation.conversationId}.` };
  }

  private async relayStatus(work: ChatwootDelivery, target: ChatwootTarget, signal: AbortSignal): Promise<Outcome> {
    const { event, delivery } = work;
    const tick = TICKS[String(event.status)];
    if (tick === undefined) return { done: `Status ${String(event.status)} is not shown in Chatwoot.` };
    const link = await findChatwootLinkByMessage(this.options.store.db, delivery.webhookId, String(event.message_id));
    if (link === undefined) return { done: 'Not a reply sent from this Chatwoot inbox.' };
    const reason = tick === 'failed' ? failureReason(event) : null;
    try {
      await this.options.api.updateMessageStatus(target, link.conversationId, link.chatwootMessageId, tick, reason, signal);
    } catch (error) {
      // Chatwoot keeps a later status over an earlier one that arrives after it (read, then a
      // late delivered): trying again would not change its answer.
      if (error instanceof ChatwootRequestError && error.statusCode === 422)
        return { done: `Chatwoot kept its later status over ${tick}.` };
      throw error;
    }
    return { done: `Chatwoot message ${link.chatwootMessageId} marked ${tick}.` };
  }

  /**
   * The person's conversation in the inbox, created on their first message: a contact (or the
   * one Chatwoot already has with their phone), its contact inbox, and a conversation. A person
   * known by LID first and by phone later keeps the conversation found under the LID.
   */
  private async conversationFor(work: ChatwootDelivery, target: ChatwootTarget, signal: AbortSignal): Promise<ChatwootConversation> {
    const { event, delivery } = work;
    const inbox = delivery.chatwoot!;
    const numberPhone = String(event.to_phone ?? '');
    const personPhone = typeof event.from_phone === 'string' && event.from_phone !== '' ? event.from_phone : null;
    const personLid = typeof event.from_lid === 'string' && event.from_lid !== '' ? event.from_lid : null;
    const keys = [personPhone && `${numberPhone}|phone:${personPhone}`, personLid && `${numberPhone}|lid:${personLid}`].filter(
      (key): key is string => typeof key === 'string',
    );
    const db = this.options.store.db;
    const known = await findChatwootConversation(db, delivery.webhookId, keys);
    if (known !== undefined) {
      if (known.personKey !== keys[0])
        await saveChatwootConversation(db, { ...known, personKey: keys[0]!, personPhone, personLid }, new Date());
      return known;
    }
    const identifier = `whatsapp:${personPhone ?? personLid}`;
    const contact = await this.contactFor(
      target,
      inbox.inboxId,
      { name: personPhone ?? personLid ?? 'WhatsApp', personPhone, identifier },
      signal,
    );
    const conversationId = await this.options.api.createConversation(
      target,
      { sourceId: contact.sourceId, inboxId: inbox.inboxId, contactId: contact.contactId },
      signal,
    );
    const conversation: ChatwootConversation = {
      webhookId: delivery.webhookId,
      personKey: keys[0]!,
      numberPhone,
      personPhone,
      personLid,
      contactId: contact.contactId,
      sourceId: contact.sourceId,
      conversationId,
    };
    await saveChatwootConversation(db, conversation, new Date());
    return conversation;
  }

  /**
   * A new contact in the inbox; when Chatwoot already has one with the phone or identifier (an
   * agent made it, or an earlier attempt did before its answer was lost), that one joins the inbox.
   */
  private async contactFor(
    target: ChatwootTarget,
    inboxId: number,
    person: { name: string; personPhone: string | null; identifier: string },
    signal: AbortSignal,
  ): Promise<{ contactId: number; sourceId: string }> {
    try {
      const created = await this.options.api.createContact(
        target,
        { inboxId, name: person.name, phoneNumber: person.personPhone, identifier: person.identifier },
        signal,
      );
      const sourceId = created.sourceId ?? (await this.options.api.createContactInbox(target, created.contactId, inboxId, signal));
      return { contactId: created.contactId, sourceId };
    } catch (error) {
      if (!(error instanceof ChatwootRequestError) || error.statusCode !== 422) throw error;
      const found = (await this.options.api.searchContacts(target, person.personPhone ?? person.identifier, signal)).find(
        (contact) =>
          contact.identifier === person.identifier || (person.personPhone !== null && contact.phoneNumber === person.personPhone),
      );
      if (found === undefined) throw error;
      return { contactId: found.id, sourceId: await this.options.api.createContactInbox(target, found.id, inboxId, signal) };
    }
  }

  private async attachmentOf(webhookId: string, event: EventPayload): Promise<ChatwootAttachment | undefined> {
    const media = event.media as { status?: string; id?: string } | undefined;
    if (media?.status !== 'available' || typeof media.id !== 'string') return undefined;
    const webhook = await findWebhookForDelivery(this.options.store.db, webhookId);
    if (webhook === undefined) return undefined;
    return this.options.readMedia(webhook.accountId, media.id);
  }
}

/** The text of a person's message, with a note when its file could not be had (it may follow). */
function contentOf(event: EventPayload, attachment: ChatwootAttachment | undefined): string {
  const text = typeof event.message === 'string' ? event.message : '';
  const media = event.media as { status?: string; kind?: string; reason?: string } | undefined;
  if (media === undefined || attachment !== undefined || media.status === 'available') return text;
  const note = `[${media.kind ?? 'file'} not available: ${media.reason ?? 'unknown reason'}]`;
  return text === '' ? note : `${text}\n${note}`;
}

function failureReason(event: EventPayload): string {
  return typeof event.error_code === 'string' && event.error_code !== ''
    ? `WhatsApp: ${event.error_code}`
    : `WhatsApp: ${String(event.status)}`;
}

function failure(error: AttemptResult['error'], detail: string): Omit<AttemptResult, 'durationMs'> {
  return { statusCode: null, responseExcerpt: null, error, errorDetail: detail, retryAfterMs: null };
}
