import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { waitForValue } from './waiting.ts';

// A local server that answers as Chatwoot's Application API does, for the calls a Chatwoot inbox
// makes. The shapes are those of Chatwoot's published API reference (swagger/ in
// chatwoot/chatwoot, rendered at developers.chatwoot.com/api-reference; the version followed is
// named in docs/integrations.md): every request is checked against its operation's request
// schema (required fields, types, enums, and no property the schema does not name), and a request
// that breaks it is answered 400 and recorded in `violations`, which the tests require empty.

type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'string|null' | 'integer|null';
interface FieldRule {
  type: FieldType;
  enum?: readonly string[];
}
interface Shape {
  required: readonly string[];
  fields: Record<string, FieldRule>;
}

// swagger/definitions/request/contact/create_payload.yml
const CONTACT_CREATE: Shape = {
  required: ['inbox_id'],
  fields: {
    inbox_id: { type: 'number' },
    name: { type: 'string' },
    email: { type: 'string' },
    blocked: { type: 'boolean' },
    account_owner_id: { type: 'integer|null' },
    phone_number: { type: 'string' },
    avatar: { type: 'string' },
    avatar_url: { type: 'string' },
    identifier: { type: 'string' },
    additional_attributes: { type: 'object' },
    custom_attributes: { type: 'object' },
  },
};
// swagger/paths/application/contact_inboxes/create.yml: inbox_id required, source_id optional.
const CONTACT_INBOX_CREATE: Shape = { required: ['inbox_id'], fields: { inbox_id: { type: 'number' }, source_id: { type: 'string' } } };
// swagger/definitions/request/conversation/create_payload.yml
const CONVERSATION_CREATE: Shape = {
  required: ['source_id'],
  fields: {
    source_id: { type: 'string' },
    inbox_id: { type: 'integer' },
    contact_id: { type: 'integer' },
    additional_attributes: { type: 'object' },
    custom_attributes: { type: 'object' },
    status: { type: 'string', enum: ['open', 'resolved', 'pending'] },
    assignee_id: { type: 'integer' },
    team_id: { type: 'integer' },
    snoozed_until: { type: 'string' },
    message: { type: 'object' },
  },
};
// swagger/definitions/request/conversation/create_message_payload.yml (JSON) and the
// multipart/form-data schema of swagger/paths/application/conversation/messages/create.yml.
const MESSAGE_CREATE: Shape = {
  required: ['content'],
  fields: {
    content: { type: 'string' },
    message_type: { type: 'string', enum: ['outgoing', 'incoming'] },
    private: { type: 'boolean' },
    content_type: { type: 'string', enum: ['text', 'input_email', 'cards', 'input_select', 'form', 'article'] },
    content_attributes: { type: 'object' },
    campaign_id: { type: 'integer' },
    attachment_ids: { type: 'array' },
    template_params: { type: 'object' },
  },
};
const MULTIPART_MESSAGE_FIELDS = ['content', 'message_type', 'private', 'content_type', 'content_attributes', 'attachments[]'];
// swagger/paths/application/conversation/messages/update.yml (operationId update-message-status)
const MESSAGE_STATUS_UPDATE: Shape = {
  required: ['status'],
  fields: { status: { type: 'string', enum: ['sent', 'delivered', 'read', 'failed'] }, external_error: { type: 'string' } },
};

/** Chatwoot's own check of a contact's phone number (E.164 with its +). */
const E164 = /^\+[1-9]\d{1,14}$/;

type Answer = { status: number; body: unknown };

export interface StandInContact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
  contactInboxes: { inboxId: number; sourceId: string }[];
}
export interface StandInConversation {
  id: number;
  inboxId: number;
  contactId: number;
  sourceId: string;
}
export interface StandInMessage {
  id: number;
  conversationId: number;
  content: string;
  message_type: 'incoming' | 'outgoing';
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** Every status the API set, in order. */
  statuses: string[];
  external_error: string | null;
  attachments: { fileName: string; mimeType: string; size: number }[];
}

export class ChatwootStandIn {
  readonly accountId = 7;
  readonly inboxId = 3;
  readonly apiAccessToken = `cw-${randomUUID()}`;
  readonly contacts: StandInContact[] = [];
  readonly conversations: StandInConversation[] = [];
  readonly messages: StandInMessage[] = [];
  /** Requests that broke the reference's shapes, with why. */
  readonly violations: string[] = [];
  /** Every request that reached the server while it was up: method and path. */
  readonly requests: string[] = [];
  /**
   * Where Chatwoot posts the API inbox's events (its webhook URL): set by the test, which hands
   * the payload to the gateway. Chatwoot posts message_created for every message of the inbox,
   * the incoming ones the gateway made included, as here.
   */
  callback: ((payload: Record<string, unknown>) => Promise<unknown>) | undefined;
  /** What the gateway answered each callback. */
  readonly callbackAnswers: unknown[] = [];
  private nextId = 100;
  private server: http.Server;
  private readonly sockets = new Set<Socket>();
  private listeningPort = 0;

  private constructor() {
    this.server = this.newServer();
  }

  static async start(): Promise<ChatwootStandIn> {
    const standIn = new ChatwootStandIn();
    await standIn.listen(0);
    return standIn;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.listeningPort}`;
  }

  /** Stops answering: connections are cut and new ones refused, as when Chatwoot is down. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Answers again on the same port. */
  async resume(): Promise<void> {
    this.server = this.newServer();
    await this.listen(this.listeningPort);
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.stop();
  }

  /** The body of POST /webhooks that connects an inbox of the gateway to this Chatwoot's inbox (for `number`, or all numbers). */
  inboxRequest(number?: string | null): Record<string, unknown> {
    return {
      url: this.baseUrl,
      events: ['message', 'message.status'],
      chatwoot: {
        account_id: this.accountId,
        inbox_id: this.inboxId,
        api_access_token: this.apiAccessToken,
        ...(number !== undefined && { number }),
      },
    };
  }

  /** An agent replies in the conversation, as from Chatwoot's composer: an outgoing message, then the callback. */
  async agentReply(conversationId: number, content: string): Promise<StandInMessage> {
    const message = this.addMessage(conversationId, content, 'outgoing', []);
    await this.announce(message);
    return message;
  }

  /** Chatwoot's message_created webhook for a message (swagger: webhook payloads; developers.chatwoot.com, webhooks). */
  messageCreatedPayload(message: StandInMessage): Record<string, unknown> {
    const conversation = this.conversations.find((candidate) => candidate.id === message.conversationId)!;
    return {
      event: 'message_created',
      id: message.id,
      content: message.content,
      created_at: new Date().toISOString(),
      message_type: message.message_type,
      content_type: 'text',
      content_attributes: {},
      source_id: null,
      private: false,
      sender:
        message.message_type === 'outgoing' ? { id: 1, name: 'Agent', type: 'user' } : { id: conversation.contactId, type: 'contact' },
      account: { id: this.accountId, name: 'Support' },
      conversation: {
        id: conversation.id,
        inbox_id: conversation.inboxId,
        status: 'open',
        contact_inbox: { source_id: conversation.sourceId },
      },
      inbox: { id: this.inboxId, name: 'WhatsApp' },
    };
  }

  /** Posts the message's callback again, as Chatwoot does when it retries a webhook. */
  async announce(message: StandInMessage): Promise<unknown> {
    if (this.callback === undefined) return undefined;
    const answer = await this.callback(this.messageCreatedPayload(message));
    this.callbackAnswers.push(answer);
    return answer;
  }

  messagesIn(conversationId: number): StandInMessage[] {
    return this.messages.filter((message) => message.conversationId === conversationId);
  }

  /** Resolves once `probe` finds what it looks for in the stand-in's state. */
  waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
    return waitForValue(probe, what);
  }

  private newServer(): http.Server {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.handle(request, Buffer.concat(chunks)).then(
          ({ status, body }) => {
            response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
            response.end(JSON.stringify(body));
          },
          (error: unknown) => {
            response.writeHead(500, { 'content-type': 'application/json' });
            response.end(JSON.stringify({ error: String(error) }));
          },
        );
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    return server;
  }

  private async listen(port: number): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.listeningPort = (this.server.address() as AddressInfo).port;
  }

  private async handle(request: http.IncomingMessage, raw: Buffer): Promise<Answer> {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const method = request.method ?? 'GET';
    this.requests.push(`${method} ${url.pathname}`);
    if (request.headers.api_access_token !== this.apiAccessToken) return { status: 401, body: { error: 'Invalid Access Token' } };
    const prefix = `/api/v1/accounts/${this.accountId}`;
    if (!url.pathname.startsWith(`${prefix}/`)) return { status: 404, body: { error: 'Resource could not be found' } };
    const route = `${method} ${url.pathname.slice(prefix.length)}`;
    const body = await this.parseBody(request, raw, route);
    if (body === undefined) return this.refuse(route, 'a body that is neither JSON nor the multipart form');
    const routes: [RegExp, (ids: number[]) => Answer][] = [
      [/^POST \/contacts$/, () => this.createContact(route, body)],
      [/^GET \/contacts\/search$/, () => this.searchContacts(url.searchParams.get('q'))],
      [/^POST \/contacts\/(\d+)\/contact_inboxes$/, ([contactId]) => this.createContactInbox(route, contactId!, body)],
      [/^POST \/conversations$/, () => this.createConversation(route, body)],
      [/^POST \/conversations\/(\d+)\/messages$/, ([conversationId]) => this.createMessage(route, conversationId!, body)],
      [
        /^PATCH \/conversations\/(\d+)\/messages\/(\d+)$/,
        ([conversationId, messageId]) => this.updateMessageStatus(route, conversationId!, messageId!, body),
      ],
    ];
    for (const [pattern, answer] of routes) {
      const match = route.match(pattern);
      if (match !== null) return answer(match.slice(1).map(Number));
    }
    return { status: 404, body: { error: `No route ${route}` } };
  }

  /** JSON, or the multipart form (its fields as strings, files apart), or {} with no body. */
  private async parseBody(request: http.IncomingMessage, raw: Buffer, route: string): Promise<Record<string, unknown> | undefined> {
    const type = request.headers['content-type'] ?? '';
    if (raw.length === 0) return {};
    if (type.startsWith('application/json')) {
      try {
        const parsed = JSON.parse(raw.toString('utf8')) as unknown;
        return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
      } catch {
        return undefined;
      }
    }
    if (type.startsWith('multipart/form-data') && route.endsWith('/messages')) {
      const form = await new Request('http://stand-in/', { method: 'POST', headers: { 'content-type': type }, body: raw }).formData();
      const fields: Record<string, unknown> = { __multipart: true };
      const files: { fileName: string; mimeType: string; size: number }[] = [];
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') fields[name] = value;
        else {
          if (name !== 'attachments[]') fields[name] = 'file';
          files.push({ fileName: value.name, mimeType: value.type, size: value.size });
        }
      }
      fields.__files = files;
      return fields;
    }
    return undefined;
  }

  private refuse(route: string, why: string): { status: number; body: unknown } {
    this.violations.push(`${route}: ${why}`);
    return { status: 400, body: { message: why } };
  }

  private check(route: string, shape: Shape, body: Record<string, unknown>): string | undefined {
    for (const name of shape.required) if (body[name] === undefined) return `${name} is required`;
    for (const [name, value] of Object.entries(body)) {
      const rule = shape.fields[name];
      if (rule === undefined) return `${name} is not a property of the request`;
      const wrong = typeProblem(rule, value);
      if (wrong !== undefined) return `${name} ${wrong}`;
    }
    void route;
    return undefined;
  }

  private createContact(route: string, body: Record<string, unknown>) {
    const problem = this.check(route, CONTACT_CREATE, body);
    if (problem !== undefined) return this.refuse(route, problem);
    const phone = (body.phone_number as string | undefined) ?? null;
    if (phone !== null && !E164.test(phone)) return { status: 422, body: { message: 'Phone number should be in e164 format' } };
    if (phone !== null && this.contacts.some((contact) => contact.phone_number === phone))
      return { status: 422, body: { message: 'Phone number has already been taken', attributes: ['phone_number'] } };
    const identifier = (body.identifier as string | undefined) ?? null;
    if (identifier !== null && this.contacts.some((contact) => contact.identifier === identifier))
      return { status: 422, body: { message: 'Identifier has already been taken', attributes: ['identifier'] } };
    const inboxId = Number(body.inbox_id);
    if (inboxId !== this.inboxId) return { status: 422, body: { message: 'Inbox not found' } };
    const contact: StandInContact = {
      id: this.nextId++,
      name: (body.name as string | undefined) ?? '',
      phone_number: phone,
      identifier,
      contactInboxes: [{ inboxId, sourceId: randomUUID() }],
    };
    this.contacts.push(contact);
    return {
      status: 200,
      body: {
        payload: {
          contact: presentContact(contact),
          contact_inbox: { inbox: this.presentInbox(), source_id: contact.contactInboxes[0]!.sourceId },
        },
      },
    };
  }

  private searchContacts(query: string | null) {
    if (query === null || query === '') return { status: 422, body: { message: 'Specify search string with parameter q' } };
    const found = this.contacts.filter((contact) =>
      [contact.name, contact.phone_number ?? '', contact.identifier ?? ''].some((value) => value.includes(query)),
    );
    return { status: 200, body: { meta: { count: found.length, current_page: 1 }, payload: found.map(presentContact) } };
  }

  private createContactInbox(route: string, contactId: number, body: Record<string, unknown>) {
    const problem = this.check(route, CONTACT_INBOX_CREATE, body);
    if (problem !== undefined) return this.refuse(route, problem);
    const contact = this.contacts.find((candidate) => candidate.id === contactId);
    if (contact === undefined) return { status: 404, body: { error: 'Resource could not be found' } };
    const sourceId = (body.source_id as string | undefined) ?? randomUUID();
    contact.contactInboxes.push({ inboxId: Number(body.inbox_id), sourceId });
    return { status: 200, body: { source_id: sourceId, inbox: this.presentInbox() } };
  }

  private createConversation(route: string, body: Record<string, unknown>) {
    const problem = this.check(route, CONVERSATION_CREATE, body);
    if (problem !== undefined) return this.refuse(route, problem);
    const sourceId = body.source_id as string;
    const contact = this.contacts.find((candidate) => candidate.contactInboxes.some((entry) => entry.sourceId === sourceId));
    if (contact === undefined || (body.contact_id !== undefined && body.contact_id !== contact.id))
      return { status: 422, body: { message: 'Contact inbox not found for the source id' } };
    const conversation: StandInConversation = {
      id: this.nextId++,
      inboxId: Number(body.inbox_id ?? this.inboxId),
      contactId: contact.id,
      sourceId,
    };
    this.conversations.push(conversation);
    return { status: 200, body: { id: conversation.id, account_id: this.accountId, inbox_id: conversation.inboxId } };
  }

  private createMessage(route: string, conversationId: number, body: Record<string, unknown>) {
    const multipart = body.__multipart === true;
    const files = (body.__files as StandInMessage['attachments'] | undefined) ?? [];
    const fields = Object.fromEntries(Object.entries(body).filter(([name]) => !name.startsWith('__')));
    if (multipart) {
      const unknown = Object.keys(fields).find((name) => !MULTIPART_MESSAGE_FIELDS.includes(name));
      if (unknown !== undefined) return this.refuse(route, `${unknown} is not a field of the multipart form`);
      if (fields.message_type !== undefined && !['outgoing', 'incoming'].includes(fields.message_type as string))
        return this.refuse(route, 'message_type is not one of outgoing, incoming');
      if (fields.private !== undefined && !['true', 'false'].includes(fields.private as string))
        return this.refuse(route, 'private is not a boolean');
      if (files.length === 0) return this.refuse(route, 'a multipart message without attachments[]');
    } else {
      const problem = this.check(route, MESSAGE_CREATE, fields);
      if (problem !== undefined) return this.refuse(route, problem);
    }
    const conversation = this.conversations.find((candidate) => candidate.id === conversationId);
    if (conversation === undefined) return { status: 404, body: { error: 'Resource could not be found' } };
    const message = this.addMessage(
      conversationId,
      (fields.content as string | undefined) ?? '',
      (fields.message_type as 'incoming' | 'outgoing' | undefined) ?? 'outgoing',
      files,
    );
    // As Chatwoot does, after the answer: the inbox's webhook hears of the new message.
    setImmediate(() => void this.announce(message).catch(() => undefined));
    return { status: 200, body: this.presentMessage(message) };
  }

  private updateMessageStatus(route: string, conversationId: number, messageId: number, body: Record<string, unknown>) {
    const problem = this.check(route, MESSAGE_STATUS_UPDATE, body);
    if (problem !== undefined) return this.refuse(route, problem);
    const message = this.messages.find((candidate) => candidate.id === messageId && candidate.conversationId === conversationId);
    if (message === undefined) return { status: 404, body: { error: 'Resource could not be found' } };
    const status = body.status as StandInMessage['status'];
    // "A message already marked read cannot be moved back to delivered."
    if (message.status === 'read' && status === 'delivered') return { status: 422, body: { error: 'Message is already read' } };
    message.status = status;
    message.statuses.push(status);
    if (status === 'failed') message.external_error = (body.external_error as string | undefined) ?? null;
    return { status: 200, body: this.presentMessage(message) };
  }

  private addMessage(
    conversationId: number,
    content: string,
    messageType: 'incoming' | 'outgoing',
    attachments: StandInMessage['attachments'],
  ): StandInMessage {
    const message: StandInMessage = {
      id: this.nextId++,
      conversationId,
      content,
      message_type: messageType,
      status: 'sent',
      statuses: [],
      external_error: null,
      attachments,
    };
    this.messages.push(message);
    return message;
  }

  private presentInbox() {
    return { id: this.inboxId, name: 'WhatsApp', channel_type: 'Channel::Api' };
  }

  /** swagger/definitions/resource/message.yml: message_type is 0 (incoming) or 1 (outgoing) in answers. */
  private presentMessage(message: StandInMessage) {
    return {
      id: message.id,
      content: message.content,
      account_id: this.accountId,
      inbox_id: this.inboxId,
      conversation_id: message.conversationId,
      message_type: message.message_type === 'incoming' ? 0 : 1,
      created_at: Math.floor(Date.now() / 1000),
      private: false,
      status: message.status,
      source_id: null,
      content_type: 'text',
      attachments: message.attachments.map((file, index) => ({
        id: index + 1,
        file_type: file.mimeType.split('/')[0],
        data_url: file.fileName,
      })),
    };
  }
}

function presentContact(contact: StandInContact) {
  return { id: contact.id, name: contact.name, phone_number: contact.phone_number, identifier: contact.identifier, email: null };
}

function typeProblem(rule: FieldRule, value: unknown): string | undefined {
  const nullable = rule.type.endsWith('|null');
  if (value === null) return nullable ? undefined : 'is null';
  const base = rule.type.replace('|null', '');
  const ok =
    base === 'string'
      ? typeof value === 'string'
      : base === 'integer'
        ? Number.isInteger(value)
        : base === 'number'
          ? typeof value === 'number'
          : base === 'boolean'
            ? typeof value === 'boolean'
            : base === 'array'
              ? Array.isArray(value)
              : typeof value === 'object' && !Array.isArray(value);
  if (!ok) return `is not ${base === 'integer' ? 'an integer' : `a ${base}`}`;
  if (rule.enum !== undefined && !rule.enum.includes(value as string)) return `is not one of ${rule.enum.join(', ')}`;
  return undefined;
}
