import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../domain/errors.ts';
import { accountScope, type AccountScope } from '../domain/tenant-scope.ts';
import type { MessageStatus } from '../domain/model.ts';
import type { Webhook } from '../domain/webhooks.ts';
import { messageStatusPayload } from '../domain/event-payloads.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Store } from '../store/database.ts';
import { findChatwootConversationById, findChatwootLinkByChatwootId, linkChatwootMessage } from '../store/repositories/chatwoot.ts';
import { findDirectMessageStatus } from '../store/repositories/messages.ts';
import { findWebhookWithCallbackKeys, type ChatwootCallbackKeys } from '../store/repositories/webhooks.ts';
import { enqueueTestEvent, type DeliveryNotifier } from './outbox.ts';

/** An agent's reply to send, read from Chatwoot's `message_created` callback. */
export interface ChatwootReply {
  webhook: Webhook;
  chatwootMessageId: number;
  conversationId: number;
  /** Our number, which sends it, and the person it goes to. */
  fromPhone: string;
  toPhone: string;
  content: string;
}

/** Chatwoot's `message_created` callback, in the parts read here; everything else it carries is ignored. */
interface MessageCreated {
  event?: unknown;
  id?: unknown;
  content?: unknown;
  message_type?: unknown;
  private?: unknown;
  account?: { id?: unknown };
  inbox?: { id?: unknown };
  conversation?: { id?: unknown };
}

const CALLBACK_TOKEN_BYTES = 32;

/** The statuses past `sent` that Chatwoot shows: those a receipt may have brought before the reply's link existed. */
const TOLD_AGAIN: ReadonlySet<MessageStatus> = new Set(['delivered', 'read', 'failed', 'cancelled', 'expired']);

function toldAgain(status: MessageStatus): status is 'delivered' | 'read' | 'failed' | 'cancelled' | 'expired' {
  return TOLD_AGAIN.has(status);
}

/** The path Chatwoot calls for an inbox: its webhook id and the inbox's callback token. */
export function chatwootCallbackPath(webhookId: string, token: string): string {
  return `/chatwoot/callbacks/${webhookId}/${token}`;
}

/** A new inbox's callback token: random, stored sealed, and kept whatever happens to the signing secret. */
export function newChatwootCallbackToken(): string {
  return randomBytes(CALLBACK_TOKEN_BYTES).toString('base64url');
}

/**
 * The token of an inbox made before tokens were stored (migration 0048): derived from its signing
 * secret. Its first rotation stores the one in use, so the URL Chatwoot holds keeps working.
 */
export function derivedChatwootCallbackToken(webhookId: string, signingSecret: string): string {
  return createHmac('sha256', signingSecret).update(`chatwoot-callback:${webhookId}`).digest('base64url');
}

/** The callback tokens an inbox accepts now: its stored one, or while it has none, those of its secrets still signing. */
export function acceptedChatwootCallbackTokens(secretBox: SecretBox, webhookId: string, keys: ChatwootCallbackKeys): string[] {
  if (keys.sealedToken !== null) return [secretBox.open(keys.sealedToken)];
  const { secrets } = keys;
  const signing = [
    secrets.current,
    ...(secrets.previous !== null && (secrets.previousExpiresAt ?? 0) > Date.now() ? [secrets.previous] : []),
  ];
  return signing.map((secret) => derivedChatwootCallbackToken(webhookId, secretBox.open(secret)));
}

/**
 * Chatwoot's callbacks of an inbox (ADR 0067). A callback is authenticated by the token in its
 * path, the inbox's own (compared in constant time; rotating the signing secret leaves it alone), and only a callback naming
 * the inbox's own Chatwoot account and inbox is read. What Chatwoot sends for messages we posted
 * (incoming), private notes and other events is ignored, and so is a reply already sent: the
 * Chatwoot message id is mapped to ours both ways, so nothing is sent twice or echoed back.
 */
export class ChatwootCallbacks {
  constructor(
    private readonly store: Store,
    private readonly secretBox: SecretBox,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /**
   * The inbox the path names, if its token is right, with its account's scope: the token stands
   * for a key of the account, as an API key does. An unknown inbox and a wrong token are the same 404.
   */
  async authenticate(webhookId: string, token: string): Promise<{ webhook: Webhook; scope: AccountScope }> {
    const found = await findWebhookWithCallbackKeys(this.store.db, webhookId);
    const webhook = found?.webhook;
    const accepted = webhook?.chatwoot == null ? [] : acceptedChatwootCallbackTokens(this.secretBox, webhookId, found!.keys);
    const given = Buffer.from(token);
    const matches = accepted.some((candidate) => {
      const expected = Buffer.from(candidate);
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
    if (webhook === undefined || !matches || !webhook.enabled) {
      throw new AppError('webhook_not_found', 'There is no Chatwoot inbox at this callback address.');
    }
    return { webhook, scope: accountScope(webhook.accountId) };
  }

  /** The agent's reply the callback carries, or why there is nothing to send. */
  async replyOf(webhook: Webhook, callback: MessageCreated): Promise<ChatwootReply | { ignored: string }> {
    const inbox = webhook.chatwoot!;
    if (callback.event !== 'message_created') return { ignored: `${String(callback.event)} is not a new message` };
    if (Number(callback.account?.id) !== inbox.accountId || Number(callback.inbox?.id) !== inbox.inboxId) {
      throw new AppError('invalid_request', "The callback names another Chatwoot account or inbox than this inbox's.", { field: 'inbox' });
    }
    if (callback.message_type !== 'outgoing' && callback.message_type !== 1) return { ignored: 'not an outgoing message' };
    if (callback.private === true) return { ignored: 'a private note' };
    const chatwootMessageId = Number(callback.id);
    const conversationId = Number(callback.conversation?.id);
    if (!Number.isSafeInteger(chatwootMessageId) || !Number.isSafeInteger(conversationId)) {
      throw new AppError('invalid_request', 'The callback names no message id or conversation id.', { field: 'id' });
    }
    if ((await findChatwootLinkByChatwootId(this.store.db, webhook.id, chatwootMessageId)) !== undefined) {
      return { ignored: 'already sent' };
    }
    const conversation = await findChatwootConversationById(this.store.db, webhook.id, conversationId);
    if (conversation === undefined) return { ignored: 'a conversation this inbox did not start' };
    const content = typeof callback.content === 'string' ? callback.content.trim() : '';
    if (content === '') return { ignored: 'no text to send' };
    const toPhone = conversation.personPhone ?? conversation.personLid;
    if (toPhone === null) return { ignored: 'the person has no address yet' };
    return { webhook, chatwootMessageId, conversationId, fromPhone: conversation.numberPhone, toPhone, content };
  }

  /**
   * A reply the send refused (the quota, the governor, an unknown recipient) shows as failed in
   * Chatwoot, with the error code as its reason: a message.status event for this inbox alone,
   * through the outbox like every other, under an id of its own linked to the Chatwoot message.
   */
  async refused(reply: ChatwootReply, errorCode: string): Promise<void> {
    const messageId = `chatwoot:${reply.chatwootMessageId}`;
    const now = new Date();
    const payload = {
      event: 'message.status' as const,
      message_id: messageId,
      from_phone: reply.fromPhone,
      to_phone: reply.toPhone,
      group: null,
      status: 'failed',
      error_code: errorCode,
      timestamp: now.toISOString(),
    };
    await this.store.db.transaction().execute(async (trx) => {
      await linkChatwootMessage(
        trx,
        { webhookId: reply.webhook.id, messageId, chatwootMessageId: reply.chatwootMessageId, conversationId: reply.conversationId },
        now,
      );
      await enqueueTestEvent(trx, reply.webhook, payload, now);
    });
    this.notifier.deliveriesQueued();
  }

  /**
   * Records which of our messages the reply became, so its receipts find it and a repeat sends
   * nothing. A receipt can beat the link: WhatsApp may deliver the reply while this callback is
   * still answering, and the relay drops a status it finds no Chatwoot message for (a receipt
   * moves the row once, so its event is not made again). So once the link is committed, the
   * reply's status as it then stands is told to this inbox again. Read after the commit, it
   * misses nothing: a receipt committed later finds the link when the relay handles it. A tick
   * told twice is harmless; Chatwoot keeps its later one.
   */
  async sent(reply: ChatwootReply, messageId: string): Promise<void> {
    const link = {
      webhookId: reply.webhook.id,
      messageId,
      chatwootMessageId: reply.chatwootMessageId,
      conversationId: reply.conversationId,
    };
    await linkChatwootMessage(this.store.db, link, new Date());
    const now = await findDirectMessageStatus(this.store.db, messageId);
    if (now === undefined || !toldAgain(now.status)) return;
    const { status } = now;
    const payload = messageStatusPayload(now.message, status, status === 'failed' ? now.errorCode : null, now.at);
    await enqueueTestEvent(this.store.db, reply.webhook, payload, new Date());
    this.notifier.deliveriesQueued();
  }
}
