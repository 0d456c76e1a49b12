import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cloudSignatureOf } from '../../src/engines/cloud/callback-signature.ts';
import { templateProblem } from './graph-template-checks.ts';

/**
 * A local stand-in for Meta's Graph API, as the Cloud API reference describes it: POST
 * /{version}/{phone-number-id}/messages (messages, read marks and the typing indicator), POST
 * /{version}/{phone-number-id}/media (multipart), GET /{version}/{waba-id}/message_templates, GET
 * /{version}/{media-id} and the file it names. Each request is checked against the reference's
 * shapes (a template message against the listed template too: graph-template-checks.ts); one off them is refused as Meta refuses it (400, code 100) and kept in `violations`,
 * which a test asserts empty. Errors come in Meta's envelope `{error: {message, type, code,
 * error_subcode, error_data, fbtrace_id}}`. A test scripts Meta's refusals with `failNext`, and
 * makes Meta's signed callbacks with `signedDelivery`. No test reaches Meta.
 */

export interface StandInRequest {
  method: string;
  path: string;
  /** The query string as sent, `?…` or empty. */
  query: string;
  body: unknown;
}

export interface StandInPhone {
  phoneNumberId: string;
  businessAccountId: string;
  accessToken: string;
}

interface ScriptedError {
  httpStatus: number;
  code: number;
  message: string;
  details: string;
}

const MESSAGE_TYPES = [
  'text',
  'image',
  'audio',
  'video',
  'document',
  'sticker',
  'location',
  'contacts',
  'reaction',
  'template',
  'interactive',
];
const MESSAGE_FIELDS = new Set([
  'messaging_product',
  'recipient_type',
  'to',
  'type',
  'context',
  'biz_opaque_callback_data',
  ...MESSAGE_TYPES,
]);
const READ_FIELDS = new Set(['messaging_product', 'status', 'message_id', 'typing_indicator']);

export class GraphApiStandIn {
  readonly requests: StandInRequest[] = [];
  readonly violations: string[] = [];
  /** Templates the business's WABA lists, in Meta's shape. */
  templates: Record<string, unknown>[] = [];
  /** The most templates one page of the listing holds, whatever `limit` asks: a test sets it small to make the listing page. */
  templatePageSize = 250;
  private readonly phones = new Map<string, StandInPhone>();
  private readonly files = new Map<string, { bytes: Buffer; mimeType: string }>();
  private readonly scripted: ScriptedError[] = [];
  private readonly server: http.Server;

  private constructor() {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.answer(request, Buffer.concat(chunks)).then(
          ({ status, body, type }) => {
            response.writeHead(status, { 'content-type': type ?? 'application/json' });
            response.end(body);
          },
          (error: unknown) => {
            response.writeHead(500).end(String(error));
          },
        );
      });
    });
  }

  static async start(): Promise<GraphApiStandIn> {
    const standIn = new GraphApiStandIn();
    await new Promise<void>((resolve) => standIn.server.listen(0, '127.0.0.1', resolve));
    return standIn;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A business phone number the stand-in serves, with the token that reaches it. */
  addPhone(): StandInPhone {
    const phone = {
      phoneNumberId: String(100_000_000_000_000 + this.phones.size + Math.floor(Math.random() * 1_000_000)),
      businessAccountId: String(200_000_000_000_000 + Math.floor(Math.random() * 1_000_000)),
      accessToken: `EAAG${randomBytes(24).toString('hex')}`,
    };
    this.phones.set(phone.phoneNumberId, phone);
    return phone;
  }

  /** Meta's answer to the next message or upload: its error, as Meta sends it. */
  failNext(code: number, message: string, details = message, httpStatus = 400): void {
    this.scripted.push({ httpStatus, code, message, details });
  }

  /** The messages sent through one phone number id, as the stand-in received them. */
  messagesOf(phoneNumberId: string): Record<string, unknown>[] {
    return this.requests
      .filter((request) => request.method === 'POST' && request.path.endsWith(`/${phoneNumberId}/messages`))
      .map((request) => request.body as Record<string, unknown>);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: http.IncomingMessage, raw: Buffer): Promise<{ status: number; body: string | Buffer; type?: string }> {
    const url = new URL(request.url ?? '/', this.url);
    const method = request.method ?? 'GET';
    const fileMatch = /^\/files\/([\w.-]+)$/.exec(url.pathname);
    if (fileMatch !== null) {
      this.requests.push({ method, path: url.pathname, query: url.search, body: undefined });
      return this.file(request, fileMatch[1]!);
    }
    const match = /^\/v\d+\.\d+\/(\d+)(?:\/(messages|media|message_templates))?$/.exec(url.pathname);
    const contentType = request.headers['content-type'] ?? '';
    const body = contentType.startsWith('application/json')
      ? parseJson(raw)
      : contentType.startsWith('multipart/')
        ? '(multipart)'
        : undefined;
    this.requests.push({ method, path: url.pathname, query: url.search, body });
    if (match === null) return this.refuse(`${method} ${url.pathname} is no Cloud API endpoint`, 404);
    const [, id, edge] = match;
    const phone = this.authorized(request, id!, edge);
    if (phone === undefined)
      return metaError(401, 190, 'Error validating access token', 'The access token is invalid or does not reach this id.');
    if (method === 'POST' && edge === 'messages') return this.message(body);
    if (method === 'POST' && edge === 'media') return this.upload(raw, contentType);
    if (method === 'GET' && edge === 'message_templates') return this.templatePage(url, id!);
    if (method === 'GET' && edge === undefined) return this.describeFile(id!);
    return this.refuse(`${method} ${url.pathname} is not a method of that edge`);
  }

  /**
   * One page of the business's templates, as Meta pages an edge: `limit` and the `after` cursor
   * of the page before, nothing else; `paging.cursors` always, `paging.next` only while more follow.
   */
  private templatePage(url: URL, businessAccountId: string): { status: number; body: string } {
    const unknown = [...url.searchParams.keys()].filter((key) => key !== 'limit' && key !== 'after');
    if (unknown.length > 0) return this.refuse(`message_templates takes no ${unknown.join(', ')} here`);
    const limit = url.searchParams.get('limit');
    if (limit !== null && !/^[1-9]\d*$/.test(limit)) return this.refuse(`limit must be a positive integer; got ${limit}`);
    const after = url.searchParams.get('after');
    const start = after === null ? 0 : cursorIndex(after);
    if (start === undefined || start > this.templates.length) return this.refuse(`after ${String(after)} is no cursor of this listing`);
    const size = Math.min(this.templatePageSize, limit === null ? 25 : Number(limit));
    const data = this.templates.slice(start, start + size);
    const end = start + data.length;
    const paging = {
      cursors: { before: cursorOf(start), after: cursorOf(end) },
      ...(end < this.templates.length && {
        next: `${this.url}/v23.0/${businessAccountId}/message_templates?limit=${size}&after=${cursorOf(end)}`,
      }),
    };
    return { status: 200, body: JSON.stringify({ data, paging }) };
  }

  /** The bearer token must be the one of the phone (or WABA, or file) the path names. */
  private authorized(request: http.IncomingMessage, id: string, edge: string | undefined): StandInPhone | undefined {
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const phones = [...this.phones.values()];
    if (edge === 'message_templates') return phones.find((phone) => phone.businessAccountId === id && phone.accessToken === token);
    if (edge === undefined) return phones.find((phone) => phone.accessToken === token);
    const phone = this.phones.get(id);
    return phone?.accessToken === token ? phone : undefined;
  }

  private message(body: unknown): { status: number; body: string } {
    if (typeof body !== 'object' || body === null) return this.refuse('the body of /messages is not a JSON object');
    const message = body as Record<string, unknown>;
    if (message.messaging_product !== 'whatsapp') return this.refuse('messaging_product must be "whatsapp"');
    if (message.status === 'read') {
      const unknown = Object.keys(message).filter((key) => !READ_FIELDS.has(key));
      if (unknown.length > 0 || typeof message.message_id !== 'string')
        return this.refuse(`a read mark is {status, message_id}; got ${JSON.stringify(message)}`);
      if (message.typing_indicator !== undefined && JSON.stringify(message.typing_indicator) !== '{"type":"text"}')
        return this.refuse('typing_indicator must be {type: "text"}');
      return { status: 200, body: JSON.stringify({ success: true }) };
    }
    const problem =
      messageProblem(message) ??
      (message.type === 'template'
        ? templateProblem(message.template as Record<string, unknown>, this.templates, (id) => this.files.has(id))
        : undefined);
    if (problem !== undefined) return this.refuse(problem);
    const scripted = this.scripted.shift();
    if (scripted !== undefined) return metaError(scripted.httpStatus, scripted.code, scripted.message, scripted.details);
    const to = message.to as string;
    return {
      status: 200,
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        contacts: [{ input: to, wa_id: to }],
        messages: [{ id: `wamid.${randomBytes(16).toString('base64url')}` }],
      }),
    };
  }

  private async upload(raw: Buffer, contentType: string): Promise<{ status: number; body: string }> {
    if (!contentType.startsWith('multipart/form-data')) return this.refuse('a media upload is multipart/form-data');
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const file = form.get('file');
    if (form.get('messaging_product') !== 'whatsapp' || typeof form.get('type') !== 'string' || !(file instanceof Blob))
      return this.refuse('a media upload carries messaging_product=whatsapp, type and file');
    const scripted = this.scripted.shift();
    if (scripted !== undefined) return metaError(scripted.httpStatus, scripted.code, scripted.message, scripted.details);
    const id = String(900_000_000_000_000 + this.files.size + 1);
    this.files.set(id, { bytes: Buffer.from(await file.arrayBuffer()), mimeType: String(form.get('type')) });
    return { status: 200, body: JSON.stringify({ id }) };
  }

  /** A file a test put here as an incoming message's (`putFile`), or one uploaded. */
  putFile(bytes: Buffer, mimeType: string): string {
    const id = String(800_000_000_000_000 + this.files.size + 1);
    this.files.set(id, { bytes, mimeType });
    return id;
  }

  private describeFile(id: string): { status: number; body: string } {
    const file = this.files.get(id);
    if (file === undefined) return metaError(400, 100, 'Invalid parameter', `There is no media ${id}.`);
    return {
      status: 200,
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        url: `${this.url}/files/${id}`,
        mime_type: file.mimeType,
        file_size: file.bytes.length,
        id,
      }),
    };
  }

  private file(request: http.IncomingMessage, id: string): { status: number; body: string | Buffer; type?: string } {
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const file = this.files.get(id);
    if (file === undefined || ![...this.phones.values()].some((phone) => phone.accessToken === token)) return { status: 404, body: '' };
    return { status: 200, body: file.bytes, type: file.mimeType };
  }

  private refuse(problem: string, httpStatus = 400): { status: number; body: string } {
    this.violations.push(problem);
    return metaError(httpStatus, 100, 'Invalid parameter', problem);
  }
}

/** What is off the reference's shape of a message object, if anything. */
function messageProblem(message: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(message).filter((key) => !MESSAGE_FIELDS.has(key));
  if (unknown.length > 0) return `unknown fields ${unknown.join(', ')}`;
  if (message.recipient_type !== undefined && message.recipient_type !== 'individual') return 'recipient_type must be "individual"';
  if (typeof message.to !== 'string' || !/^\d{6,15}$/.test(message.to)) return `to must be the phone's digits; got ${String(message.to)}`;
  const type = message.type;
  if (typeof type !== 'string' || !MESSAGE_TYPES.includes(type)) return `type ${String(type)} is not a message type`;
  const object = message[type] as Record<string, unknown> | undefined;
  if (typeof object !== 'object' || object === null) return `a ${type} message carries a ${type} object`;
  const others = MESSAGE_TYPES.filter((each) => each !== type && message[each] !== undefined);
  if (others.length > 0) return `a ${type} message carries no ${others.join(', ')}`;
  if (message.context !== undefined && typeof (message.context as { message_id?: unknown }).message_id !== 'string')
    return 'context is {message_id}';
  return objectProblem(type, object);
}

function objectProblem(type: string, object: Record<string, unknown> | unknown[]): string | undefined {
  const fields = (allowed: string[]) => {
    const extra = Object.keys(object).filter((key) => !allowed.includes(key));
    return extra.length > 0 ? `the ${type} object takes no ${extra.join(', ')}` : undefined;
  };
  const record = object as Record<string, unknown>;
  switch (type) {
    case 'text':
      return typeof record.body !== 'string' || record.body === '' ? 'text.body is required' : fields(['body', 'preview_url']);
    case 'image':
    case 'video':
    case 'audio':
    case 'sticker':
    case 'document':
      if (typeof record.id !== 'string' && typeof record.link !== 'string') return `${type} needs id or link`;
      if ((type === 'audio' || type === 'sticker') && record.caption !== undefined) return `${type} takes no caption`;
      return fields(type === 'document' ? ['id', 'link', 'caption', 'filename'] : ['id', 'link', 'caption']);
    case 'location':
      return typeof record.latitude !== 'number' || typeof record.longitude !== 'number'
        ? 'location needs latitude and longitude numbers'
        : fields(['latitude', 'longitude', 'name', 'address']);
    case 'contacts':
      return Array.isArray(object) &&
        object.every((card) => typeof (card as { name?: { formatted_name?: unknown } }).name?.formatted_name === 'string')
        ? undefined
        : 'contacts is a list of cards, each with name.formatted_name';
    case 'reaction':
      return typeof record.message_id !== 'string' || typeof record.emoji !== 'string'
        ? 'reaction is {message_id, emoji}'
        : fields(['message_id', 'emoji']);
    case 'interactive':
      if (!['button', 'list', 'cta_url'].includes(String(record.type)))
        return `interactive type ${String(record.type)} is not button, list or cta_url`;
      if (typeof (record.body as { text?: unknown } | undefined)?.text !== 'string') return 'interactive needs body.text';
      return typeof record.action !== 'object' ? 'interactive needs an action' : fields(['type', 'header', 'body', 'footer', 'action']);
    default:
      return undefined;
  }
}

function metaError(httpStatus: number, code: number, message: string, details: string): { status: number; body: string } {
  return {
    status: httpStatus,
    body: JSON.stringify({
      error: {
        message: `(#${code}) ${message}`,
        type: 'OAuthException',
        code,
        error_data: { messaging_product: 'whatsapp', details },
        fbtrace_id: `A${randomBytes(9).toString('base64url')}`,
      },
    }),
  };
}

/** A listing's cursor, opaque as Meta's are: the position it stands for, in base64. */
function cursorOf(index: number): string {
  return Buffer.from(`cursor:${index}`).toString('base64');
}

function cursorIndex(cursor: string): number | undefined {
  const match = /^cursor:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match === null ? undefined : Number(match[1]);
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return '(not JSON)';
  }
}

/** Meta's `messages` callback body for one phone number: messages, statuses, or both. */
export function cloudCallback(phone: StandInPhone, value: { messages?: unknown[]; statuses?: unknown[]; contacts?: unknown[] }): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: phone.businessAccountId,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: phone.phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  });
}

/** A text a person sent, as Meta's callback carries it; `from` is digits without the plus. */
export function incomingText(from: string, text: string, at = new Date()): Record<string, unknown> {
  return {
    from,
    id: `wamid.in${randomBytes(12).toString('base64url')}`,
    timestamp: String(Math.floor(at.getTime() / 1_000)),
    type: 'text',
    text: { body: text },
  };
}

/** The headers of a callback Meta signed with the app secret. */
export function signedHeaders(appSecret: string, body: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-hub-signature-256': cloudSignatureOf(appSecret, body) };
}

/** An approved en_US utility template with these components, as Meta's listing gives one. */
export function approvedTemplate(id: string, name: string, components: Record<string, unknown>[]): Record<string, unknown> {
  return { id, name, language: 'en_US', status: 'APPROVED', category: 'UTILITY', components };
}

/** A template with a text header of one placeholder and a body of two, as most tests send. */
export const ORDER_READY = approvedTemplate('1', 'order_ready', [
  { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' },
  { type: 'BODY', text: 'Hello {{1}}, your order {{2}} is ready.' },
]);
