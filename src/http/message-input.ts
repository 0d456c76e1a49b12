import { AppError } from '../domain/errors.ts';
import { assertSendableText } from '../domain/message-text.ts';
import type { Message } from '../domain/model.ts';
import { type E164, parseE164 } from '../domain/phone.ts';
import type { MessageRequestBody } from './schemas.ts';
import { isMediaKind, mediaKinds, type MediaClaims, type MediaKind, type MediaObject } from '../domain/media.ts';
import { mediaPayload, type MediaAddresses } from '../domain/webhooks.ts';

export interface MessageInput {
  fromPhone: E164;
  toPhone: E164;
  text: string;
  media?: MediaInput;
}

/** A request's file: an upload by id or the bytes themselves, with the caller's claims. */
export interface MediaInput extends MediaClaims {
  id?: string;
  data?: Buffer;
  url?: string;
  fileName?: string;
}

/** The body rules shared by /send_message and /sandbox/receive, after the schema's type check. */
export function parseMessageInput(body: MessageRequestBody, maxMessageLength: number): MessageInput {
  // A missing field is reported before any value is judged, as the schema's own checks are.
  if (body.media === undefined && body.message === undefined) throw new AppError('invalid_request', 'The field message is missing.', { field: 'message', problem: 'missing' });
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const toPhone = parsePhoneField(body.to_phone, 'to_phone');
  if (body.media === undefined) {
    assertSendableText(body.message!, maxMessageLength);
    return { fromPhone, toPhone, text: body.message! };
  }
  // A caption may be empty, but must be sendable like any text.
  const text = body.message ?? '';
  assertSendableText(text, maxMessageLength, true);
  return { fromPhone, toPhone, text, media: parseMediaInput(body.media) };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function parseMediaInput(media: NonNullable<MessageRequestBody['media']>): MediaInput {
  const sources = [media.id, media.data, media.url].filter((source) => source !== undefined).length;
  if (sources !== 1) throw new AppError('invalid_media', 'media needs exactly one source: url (fetched by the gateway), id (an upload) or data (base64).', { field: 'media' });
  if (media.kind !== undefined && !isMediaKind(media.kind)) {
    throw new AppError('invalid_media', `media.kind must be one of ${mediaKinds.join(', ')}.`, { field: 'media.kind' });
  }
  const claims = { kind: media.kind as MediaKind | undefined, mimeType: media.mime_type, fileName: media.filename };
  if (media.id !== undefined) return { ...claims, id: media.id };
  if (media.url !== undefined) return { ...claims, url: media.url };
  const data = media.data!.replace(/\s+/g, '');
  if (data.length % 4 === 1 || !BASE64.test(data)) throw new AppError('invalid_media', 'media.data is not base64.', { field: 'media.data' });
  return { ...claims, data: Buffer.from(data, 'base64') };
}

function parsePhoneField(value: string, field: 'from_phone' | 'to_phone'): E164 {
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
    to_phone: message.toPhone,
    message: message.text,
    ...(media !== undefined && { media: described }),
    status: message.status,
  };
}
