import { AppError } from '../domain/errors.ts';
import { assertSendableText } from '../domain/message-text.ts';
import type { Message } from '../domain/model.ts';
import { type E164, parseE164 } from '../domain/phone.ts';
import type { MessageRequestBody } from './schemas.ts';

export interface MessageInput {
  fromPhone: E164;
  toPhone: E164;
  text: string;
}

/** The body rules shared by /send_message and /sandbox/receive, after the schema's type check. */
export function parseMessageInput(body: MessageRequestBody, maxMessageLength: number): MessageInput {
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const toPhone = parsePhoneField(body.to_phone, 'to_phone');
  assertSendableText(body.message, maxMessageLength);
  return { fromPhone, toPhone, text: body.message };
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
export function presentMessage(message: Message) {
  return {
    message_id: message.id,
    created_at: message.createdAt.toISOString(),
    from_phone: message.fromPhone,
    ...(message.direction === 'inbound' && { from_lid: message.fromLid }),
    to_phone: message.toPhone,
    message: message.text,
    status: message.status,
  };
}
