import { FormData, type Agent, type Dispatcher } from 'undici';
import type { AttemptError } from '../domain/webhooks.ts';
import type { AddressPolicy } from './address-guard.ts';
import { BlockedAddressError } from './address-guard.ts';
import { createGuardedAgent } from './guarded-agent.ts';

/** Chatwoot's answer is read only this far: ids are all we need from it. */
const MAX_RESPONSE_BYTES = 256 * 1024;
const EXCERPT_CHARACTERS = 512;

/** One Chatwoot account as an inbox reaches it: the base URL, the account and the access token. */
export interface ChatwootTarget {
  baseUrl: string;
  accountId: number;
  apiAccessToken: string;
}

/** A file sent with a message, as Chatwoot's multipart form takes it (`attachments[]`). */
export interface ChatwootAttachment {
  bytes: Buffer;
  mimeType: string;
  fileName: string;
}

/** A request Chatwoot answered with an error status, or that never got an answer. */
export class ChatwootRequestError extends Error {
  constructor(
    readonly statusCode: number | null,
    readonly kind: AttemptError | null,
    message: string,
    readonly excerpt: string | null,
  ) {
    super(message);
  }
}

/**
 * The few calls of Chatwoot's Application API an inbox makes (contacts, contact inboxes,
 * conversations, messages, message status), over an undici pool whose connections pass the SSRF
 * guard as webhooks' do. Every request authenticates with the account's `api_access_token`
 * header and follows no redirect; a failure is thrown as a ChatwootRequestError.
 */
export class ChatwootApi {
  private agent: Agent;

  constructor(private readonly options: { addressPolicy: AddressPolicy; timeoutMs: number; userAgent: string }) {
    this.agent = createGuardedAgent({ addressPolicy: options.addressPolicy, connectTimeoutMs: options.timeoutMs });
  }

  /** Creates a contact in the inbox; Chatwoot answers with it and its contact inbox (the source id). */
  async createContact(
    target: ChatwootTarget,
    contact: { inboxId: number; name: string; phoneNumber: string | null; identifier: string },
    signal: AbortSignal,
  ): Promise<{ contactId: number; sourceId: string | null }> {
    const answer = await this.json<ContactCreateAnswer>(target, 'POST', '/contacts', signal, {
      inbox_id: contact.inboxId,
      name: contact.name,
      identifier: contact.identifier,
      ...(contact.phoneNumber !== null && { phone_number: contact.phoneNumber }),
    });
    const created = answer.payload?.contact ?? answer.payload;
    return { contactId: idOf(created, 'contact'), sourceId: answer.payload?.contact_inbox?.source_id ?? null };
  }

  /** The account's contacts matching `query` (name, email, phone number or identifier). */
  async searchContacts(
    target: ChatwootTarget,
    query: string,
    signal: AbortSignal,
  ): Promise<{ id: number; phoneNumber: string | null; identifier: string | null }[]> {
    const answer = await this.json<{ payload?: { id: number; phone_number?: string | null; identifier?: string | null }[] }>(
      target,
      'GET',
      `/contacts/search?q=${encodeURIComponent(query)}`,
      signal,
    );
    return (answer.payload ?? []).map((contact) => ({
      id: idOf(contact, 'contact'),
      phoneNumber: contact.phone_number ?? null,
      identifier: contact.identifier ?? null,
    }));
  }

  /** Adds an existing contact to the inbox; the answer's source id starts its conversations. */
  async createContactInbox(target: ChatwootTarget, contactId: number, inboxId: number, signal: AbortSignal): Promise<string> {
    const answer = await this.json<{ source_id?: string }>(target, 'POST', `/contacts/${contactId}/contact_inboxes`, signal, {
      inbox_id: inboxId,
    });
    if (typeof answer.source_id !== 'string') throw unexpected('a contact inbox without source_id');
    return answer.source_id;
  }

  async createConversation(
    target: ChatwootTarget,
    conversation: { sourceId: string; inboxId: number; contactId: number },
    signal: AbortSignal,
  ): Promise<number> {
    const answer = await this.json<{ id?: number }>(target, 'POST', '/conversations', signal, {
      source_id: conversation.sourceId,
      inbox_id: conversation.inboxId,
      contact_id: conversation.contactId,
      status: 'open',
    });
    return idOf(answer, 'conversation');
  }

  /** A message in the conversation: JSON for text, the multipart form when it carries a file. */
  async createMessage(
    target: ChatwootTarget,
    conversationId: number,
    message: { content: string; messageType: 'incoming' | 'outgoing'; attachment?: ChatwootAttachment },
    signal: AbortSignal,
  ): Promise<number> {
    const path = `/conversations/${conversationId}/messages`;
    if (message.attachment === undefined) {
      const fields = { content: message.content, message_type: message.messageType, private: false };
      return idOf(await this.json<{ id?: number }>(target, 'POST', path, signal, fields), 'message');
    }
    const form = new FormData();
    form.append('content', message.content);
    form.append('message_type', message.messageType);
    form.append('private', 'false');
    const { bytes, mimeType, fileName } = message.attachment;
    form.append('attachments[]', new Blob([bytes], { type: mimeType }), fileName);
    return idOf(await this.json<{ id?: number }>(target, 'POST', path, signal, form), 'message');
  }

  /** Sets an API inbox message's status: its ticks, or failed with the reason shown to the agent. */
  async updateMessageStatus(
    target: ChatwootTarget,
    conversationId: number,
    messageId: number,
    status: 'sent' | 'delivered' | 'read' | 'failed',
    externalError: string | null,
    signal: AbortSignal,
  ): Promise<void> {
    await this.json(target, 'PATCH', `/conversations/${conversationId}/messages/${messageId}`, signal, {
      status,
      ...(status === 'failed' && externalError !== null && { external_error: externalError }),
    });
  }

  close(): void {
    const closing = this.agent;
    this.agent = createGuardedAgent({ addressPolicy: this.options.addressPolicy, connectTimeoutMs: this.options.timeoutMs });
    void closing.destroy();
  }

  private async json<T>(
    target: ChatwootTarget,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    signal: AbortSignal,
    body?: object,
  ): Promise<T> {
    const url = new URL(`${target.baseUrl.replace(/\/+$/, '')}/api/v1/accounts/${target.accountId}${path}`);
    const isForm = body instanceof FormData;
    let response: Dispatcher.ResponseData;
    try {
      response = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        signal,
        headers: {
          api_access_token: target.apiAccessToken,
          'user-agent': this.options.userAgent,
          accept: 'application/json',
          ...(body !== undefined && !isForm && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: isForm ? body : JSON.stringify(body) }),
      });
    } catch (error) {
      throw networkFailure(error, signal);
    }
    const text = await readText(response.body);
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const excerpt = text.slice(0, EXCERPT_CHARACTERS);
      throw new ChatwootRequestError(
        response.statusCode,
        null,
        `Chatwoot answered ${method} ${path.split('?')[0]} with ${response.statusCode}.`,
        excerpt,
      );
    }
    try {
      return (text === '' ? {} : JSON.parse(text)) as T;
    } catch {
      throw unexpected(`an answer that is not JSON to ${method} ${path.split('?')[0]}`);
    }
  }
}

interface ContactCreateAnswer {
  payload?: { contact?: { id?: number }; contact_inbox?: { source_id?: string }; id?: number };
}

function idOf(value: { id?: unknown } | undefined, what: string): number {
  const id = Number(value?.id);
  if (!Number.isSafeInteger(id) || id <= 0) throw unexpected(`a ${what} without an id`);
  return id;
}

function unexpected(what: string): ChatwootRequestError {
  return new ChatwootRequestError(null, 'network', `Chatwoot sent ${what}.`, null);
}

async function readText(body: AsyncIterable<Buffer> & { destroy(): void; readableEnded?: boolean }): Promise<string> {
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      received += chunk.length;
      if (received > MAX_RESPONSE_BYTES) break;
    }
  } finally {
    if (body.readableEnded === false) body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

function networkFailure(error: unknown, signal: AbortSignal): ChatwootRequestError {
  if (signal.aborted) return new ChatwootRequestError(null, 'timeout', 'Chatwoot did not answer within the timeout.', null);
  if (error instanceof BlockedAddressError) return new ChatwootRequestError(null, 'blocked_address', error.message, null);
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ECONNREFUSED') return new ChatwootRequestError(null, 'refused', 'The connection to Chatwoot was refused.', null);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new ChatwootRequestError(null, 'dns', `Chatwoot's host does not resolve (${code}).`, null);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
    return new ChatwootRequestError(null, 'reset', 'The connection to Chatwoot was closed before an answer.', null);
  if (code === 'UND_ERR_CONNECT_TIMEOUT')
    return new ChatwootRequestError(null, 'timeout', 'No connection to Chatwoot within the timeout.', null);
  return new ChatwootRequestError(null, 'network', error instanceof Error ? error.message : String(error), null);
}
