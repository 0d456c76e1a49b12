import { AppError } from '../domain/errors.ts';
import { assertSendableText } from '../domain/message-text.ts';
import type { Message } from '../domain/model.ts';
import { type E164, parseE164 } from '../domain/phone.ts';
import type { MessageRequestBody, SandboxReceiveBody } from './schemas.ts';
import { isValidLocation, presentStructured, type StructuredContent } from '../domain/structured-content.ts';
import { assertMediaType, isMediaKind, mediaKinds, type MediaClaims, type MediaKind, type MediaObject } from '../domain/media.ts';
import { mediaPayload, presentChat, presentMentions, presentReplyTo, type MediaAddresses } from '../domain/webhooks.ts';
import { hasIdPrefix } from '../domain/ids.ts';
import { MAX_MENTIONS, parseGroupId } from '../domain/groups.ts';
import { parsePhoneList } from '../domain/phone-lists.ts';
import type { SendSchedule } from '../messaging/governor/send-governor.ts';

export interface MessageInput {
  fromPhone: E164;
  toPhone: E164;
  text: string;
  media?: MediaInput;
  /** The message_id of the message this one answers. */
  replyTo?: string;
}

/** What a send names as its recipient: a phone, or a group with the members it mentions. */
export type SendInput = Omit<MessageInput, 'toPhone'> & ({ toPhone: E164; toGroup?: undefined } | { toGroup: string; mentions: E164[]; toPhone?: undefined }) & SendTiming;

/** When a send should leave and until when it may wait, and whether its answer waits for it. */
export interface SendTiming {
  schedule?: SendSchedule;
  wait?: boolean;
}

/** A request's file: an upload by id or the bytes themselves, with the caller's claims. */
export interface MediaInput extends MediaClaims {
  id?: string;
  data?: Buffer;
  url?: string;
  fileName?: string;
}

/** /send_message's body, after the schema's type check: a message to a phone or to a group. */
export function parseSendInput(body: MessageRequestBody, maxMessageLength: number): SendInput {
  if ((body.to_phone === undefined) === (body.to_group === undefined)) {
    const problem = body.to_phone === undefined ? 'missing' : 'conflict';
    throw new AppError('invalid_request', 'Give exactly one of to_phone (a phone) and to_group (a group id from GET /groups).', { field: 'to_phone', problem });
  }
  const timing = parseTiming(body);
  if (body.to_group === undefined) {
    if (body.mentions !== undefined) throw new AppError('invalid_request', 'mentions are for group messages (to_group); a direct chat has no one else to mention.', { field: 'mentions' });
    return { ...parseMessageInput({ ...body, to_phone: body.to_phone! }, maxMessageLength), ...timing };
  }
  const { toPhone: _none, ...content } = parseMessageInput({ ...body, to_phone: body.from_phone }, maxMessageLength);
  return { ...content, toGroup: parseGroupId(body.to_group, 'to_group'), mentions: parseMentions(body.mentions), ...timing };
}

function parseTiming(body: MessageRequestBody): SendTiming {
  const sendAt = body.send_at === undefined ? undefined : parseInstant(body.send_at, 'send_at');
  const expiresAt = body.expires_at === undefined ? undefined : parseInstant(body.expires_at, 'expires_at');
  return {
    ...((sendAt !== undefined || expiresAt !== undefined) && { schedule: { ...(sendAt !== undefined && { sendAt }), ...(expiresAt !== undefined && { expiresAt }) } }),
    ...(body.wait !== undefined && { wait: body.wait }),
  };
}

/** An ISO 8601 time with its zone (Z or an offset): a time without one would be read in the server's zone. */
function parseInstant(raw: string, field: string): Date {
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(raw) ? new Date(raw) : undefined;
  if (at === undefined || Number.isNaN(at.getTime())) throw new AppError('invalid_request', `${field} must be an ISO 8601 time with its zone, such as 2026-06-01T09:00:00Z.`, { field, problem: 'invalid' });
  return at;
}

/** A group message's mentions, each member once, for a send and for a simulated message alike. */
function parseMentions(raw: readonly string[] | undefined): E164[] {
  return [...new Set(parsePhoneList(raw ?? [], 'mentions', { min: 0, max: MAX_MENTIONS }))];
}

/** The body rules shared by /send_message and /sandbox/receive, after the schema's type check. */
export function parseMessageInput(body: MessageRequestBody & { to_phone: string }, maxMessageLength: number): MessageInput {
  // A missing field is reported before any value is judged, as the schema's own checks are.
  if (body.media === undefined && body.message === undefined) throw new AppError('invalid_request', 'The field message is missing.', { field: 'message', problem: 'missing' });
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const toPhone = parsePhoneField(body.to_phone, 'to_phone');
  const replyTo = body.reply_to === undefined ? {} : { replyTo: parseReplyTo(body.reply_to) };
  if (body.media === undefined) {
    assertSendableText(body.message!, maxMessageLength);
    return { fromPhone, toPhone, text: body.message!, ...replyTo };
  }
  // A caption may be empty, but must be sendable like any text.
  const text = body.message ?? '';
  assertSendableText(text, maxMessageLength, true);
  return { fromPhone, toPhone, text, media: parseMediaInput(body.media), ...replyTo };
}

/** A message id, or the 400 any unknown id gets (the chat is checked where the number is known). */
function parseReplyTo(raw: string): string {
  if (!hasIdPrefix('message', raw)) throw new AppError('invalid_reply_to', `reply_to must be a message_id (msg_…) of this chat; "${raw.slice(0, 64)}" is not one.`, { field: 'reply_to' });
  return raw;
}

/** /sandbox/receive: a message as a send takes it, or a shared place or contact cards instead. */
export function parseSandboxReceiveInput(body: SandboxReceiveBody, maxMessageLength: number): MessageInput & { structured?: StructuredContent; failedDownloads?: number; groupId?: string; mentions?: E164[] } {
  if (body.mentions !== undefined && body.group_id === undefined) throw new AppError('invalid_request', 'mentions are for group messages (group_id).', { field: 'mentions' });
  const inGroup = body.group_id === undefined ? {} : { groupId: parseGroupId(body.group_id, 'group_id'), mentions: parseMentions(body.mentions) };
  return { ...parseSandboxMessage(body, maxMessageLength), ...inGroup };
}

function parseSandboxMessage(body: SandboxReceiveBody, maxMessageLength: number): MessageInput & { structured?: StructuredContent; failedDownloads?: number } {
  const failedDownloads = body.simulate_failed_downloads;
  if (failedDownloads !== undefined) {
    if (body.media === undefined) throw new AppError('invalid_request', 'simulate_failed_downloads needs media: it is how many downloads of the file fail.', { field: 'simulate_failed_downloads' });
    if (failedDownloads < 0 || failedDownloads > 10) throw new AppError('invalid_request', 'simulate_failed_downloads must be 0 to 10.', { field: 'simulate_failed_downloads' });
  }
  if (body.location === undefined && body.contacts === undefined) return { ...parseMessageInput(body, maxMessageLength), ...(failedDownloads !== undefined && { failedDownloads }) };
  if ([body.media, body.location, body.contacts].filter((part) => part !== undefined).length > 1) {
    throw new AppError('invalid_request', 'A message carries one of media, location and contacts.', { field: body.location === undefined ? 'contacts' : 'location' });
  }
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const toPhone = parsePhoneField(body.to_phone, 'to_phone');
  const text = body.message ?? '';
  assertSendableText(text, maxMessageLength, true);
  if (body.location !== undefined) {
    const location = { latitude: body.location.latitude, longitude: body.location.longitude, name: body.location.name ?? null, address: body.location.address ?? null, url: null };
    if (!isValidLocation(location)) throw new AppError('invalid_request', 'location needs a latitude within ±90 and a longitude within ±180.', { field: 'location' });
    return { fromPhone, toPhone, text, structured: { location } };
  }
  const cards = body.contacts!;
  if (cards.length < 1 || cards.length > 10) throw new AppError('invalid_request', 'contacts holds 1 to 10 cards.', { field: 'contacts' });
  const contacts = cards.map((card, index) => {
    const phones = card.phones.map((raw, at) => {
      const phone = parseE164(raw);
      if (phone === undefined) throw new AppError('invalid_phone_number', `contacts[${index}].phones[${at}] is not a valid international phone number.`, { field: `contacts[${index}].phones[${at}]` });
      return phone;
    });
    return { name: card.name, phones, vcard: contactVcard(card.name, phones) };
  });
  return { fromPhone, toPhone, text, structured: { contacts } };
}

/** A card as WhatsApp writes one: the name, and each phone with its WhatsApp id. */
function contactVcard(name: string, phones: E164[]): string {
  const escaped = name.replace(/[\\;,]/g, (character) => `\\${character}`).replace(/[\r\n]+/g, ' ');
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escaped}`, ...phones.map((phone) => `TEL;type=CELL;waid=${phone.slice(1)}:${phone}`), 'END:VCARD'].join('\n');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function parseMediaInput(media: NonNullable<MessageRequestBody['media']>): MediaInput {
  const sources = [media.id, media.data, media.url].filter((source) => source !== undefined).length;
  if (sources !== 1) throw new AppError('invalid_media', 'media needs exactly one source: url (fetched by the gateway), id (an upload) or data (base64).', { field: 'media' });
  if (media.kind !== undefined && !isMediaKind(media.kind)) {
    throw new AppError('invalid_media', `media.kind must be one of ${mediaKinds.join(', ')}.`, { field: 'media.kind' });
  }
  if (media.mime_type !== undefined) assertMediaType(media.mime_type, 'media.mime_type');
  const claims = { kind: media.kind as MediaKind | undefined, mimeType: media.mime_type, fileName: media.filename };
  if (media.id !== undefined) return { ...claims, id: media.id };
  if (media.url !== undefined) return { ...claims, url: media.url };
  const data = media.data!.replace(/\s+/g, '');
  if (data.length % 4 === 1 || !BASE64.test(data)) throw new AppError('invalid_media', 'media.data is not base64.', { field: 'media.data' });
  return { ...claims, data: Buffer.from(data, 'base64') };
}

export function parsePhoneField(value: string, field: 'from_phone' | 'to_phone'): E164 {
  const phone = parseE164(value);
  if (phone === undefined) {
    throw new AppError(
      'invalid_phone_number',
      `${field} is not a valid international phone number; include the country code, e.g. +447700900123.`,
      { field },
    );
  }
  return phone;
}

/**
 * The wire shape of a stored message, as both send and receive answer it. Only an inbound
 * message can come from a LID-addressed sender, so only it carries from_lid.
 */
export function presentMessage(message: Message, media?: MediaObject, addresses?: MediaAddresses) {
  const { status: _available, ...described } = media === undefined ? { status: undefined } : mediaPayload({ stored: media }, addresses);
  return {
    message_id: message.id,
    created_at: message.createdAt.toISOString(),
    from_phone: message.fromPhone,
    ...(message.direction === 'inbound' && { from_lid: message.fromLid }),
    ...presentChat(message),
    ...presentMentions(message),
    message: message.text,
    ...(media !== undefined && { media: described }),
    ...presentStructured(message.structured),
    reply_to: presentReplyTo(message.replyTo),
    status: message.status,
  };
}
