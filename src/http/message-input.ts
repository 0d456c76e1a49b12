import { AppError } from '../domain/errors.ts';
import { assertSendableText } from '../domain/message-text.ts';
import type { Message } from '../domain/model.ts';
import { type E164, parseE164, phoneProblem } from '../domain/phone.ts';
import type { MessageRequestBody, SandboxReceiveBody } from './schemas.ts';
import { isLid } from '../domain/identities.ts';
import { presentReferral, referralFromJson, type AdReferral } from '../domain/referral.ts';
import { presentStructured, type StructuredContent, type LinkPreviewAsk } from '../domain/structured-content.ts';
import { assertOneContentKind, parseStructuredInput } from './structured-input.ts';
import { assertMediaType, isMediaKind, mediaKinds, type MediaKind, type MediaObject } from '../domain/media.ts';
import { mediaPayload, presentChat, presentMentions, presentReplyTo, type MediaAddresses } from '../domain/event-payloads.ts';
import { hasIdPrefix } from '../domain/ids.ts';
import { isGroupId, MAX_MENTIONS, parseGroupId } from '../domain/groups.ts';
import { parsePhoneList } from '../domain/phone-lists.ts';
import {
  assertViewOnceKind,
  firstLink,
  type MediaInput,
  type MessageInput,
  type SendInput,
  type SendTiming,
} from '../messaging/send-input.ts';

/** /send_message's body, after the schema's type check: a message to a phone or to a group. */
export function parseSendInput(body: MessageRequestBody, maxMessageLength: number): SendInput {
  // A group's chat id in to_phone is the group, as clients moving from WAHA or Evolution API write it.
  if (body.to_phone !== undefined && body.to_group === undefined && isGroupId(body.to_phone.trim())) {
    const { to_phone: groupId, ...rest } = body;
    return parseSendInput({ ...rest, to_group: groupId.trim() }, maxMessageLength);
  }
  if ((body.to_phone === undefined) === (body.to_group === undefined)) {
    const problem = body.to_phone === undefined ? 'missing' : 'conflict';
    throw new AppError('invalid_request', 'Give exactly one of to_phone (a phone) and to_group (a group id from GET /groups).', {
      field: 'to_phone',
      problem,
    });
  }
  const timing = parseTiming(body);
  if (body.to_group === undefined) {
    if (body.mentions !== undefined)
      throw new AppError('invalid_request', 'mentions are for group messages (to_group); a direct chat has no one else to mention.', {
        field: 'mentions',
      });
    if (isLid(body.to_phone!.trim())) {
      const { toPhone: _own, ...content } = parseMessageInput({ ...body, to_phone: body.from_phone }, maxMessageLength);
      return { ...content, toLid: body.to_phone!.trim(), ...timing };
    }
    return { ...parseMessageInput({ ...body, to_phone: body.to_phone! }, maxMessageLength), ...timing };
  }
  const { toPhone: _none, ...content } = parseMessageInput({ ...body, to_phone: body.from_phone }, maxMessageLength);
  return { ...content, toGroup: parseGroupId(body.to_group, 'to_group'), mentions: parseMentions(body.mentions), ...timing };
}

function parseTiming(body: MessageRequestBody): SendTiming {
  const sendAt = body.send_at === undefined ? undefined : parseInstant(body.send_at, 'send_at');
  const expiresAt = body.expires_at === undefined ? undefined : parseInstant(body.expires_at, 'expires_at');
  return {
    ...((sendAt !== undefined || expiresAt !== undefined) && {
      schedule: { ...(sendAt !== undefined && { sendAt }), ...(expiresAt !== undefined && { expiresAt }) },
    }),
    ...(body.wait !== undefined && { wait: body.wait }),
  };
}

/** An ISO 8601 time with its zone (Z or an offset): a time without one would be read in the server's zone. */
function parseInstant(raw: string, field: string): Date {
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(raw) ? new Date(raw) : undefined;
  if (at === undefined || Number.isNaN(at.getTime()))
    throw new AppError('invalid_request', `${field} must be an ISO 8601 time with its zone, such as 2026-06-01T09:00:00Z.`, {
      field,
      problem: 'invalid',
    });
  return at;
}

/** A group message's mentions, each member once, for a send and for a simulated message alike. */
function parseMentions(raw: readonly string[] | undefined): E164[] {
  return [...new Set(parsePhoneList(raw ?? [], 'mentions', { min: 0, max: MAX_MENTIONS }))];
}

/** The body rules shared by /send_message and /sandbox/receive, after the schema's type check. */
function parseMessageInput(body: MessageRequestBody & { to_phone: string }, maxMessageLength: number): MessageInput {
  // A missing field is reported before any value is judged, as the schema's own checks are.
  const hasContent =
    body.media !== undefined ||
    body.location !== undefined ||
    body.contacts !== undefined ||
    body.poll !== undefined ||
    body.template !== undefined ||
    body.interactive !== undefined;
  if (!hasContent && body.message === undefined)
    throw new AppError('invalid_request', 'The field message is missing.', { field: 'message', problem: 'missing' });
  assertOneContentKind(body);
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const toPhone = parsePhoneField(body.to_phone, 'to_phone');
  const replyTo = body.reply_to === undefined ? {} : { replyTo: parseReplyTo(body.reply_to) };
  const structured = parseStructuredInput(body);
  if (structured !== undefined) {
    // Only a location takes a text, as its comment; a template is stored as its name (its body is Meta's to fill).
    const text =
      'template' in structured
        ? `[template ${structured.template.name}]`
        : 'interactive' in structured
          ? structured.interactive.body
          : (body.message ?? '');
    assertSendableText(text, maxMessageLength, true);
    // A template's media header is the message's file: fetched, stored and uploaded as any file is.
    const headerMedia = body.template?.header_media;
    const field = 'template.header_media';
    const media = headerMedia === undefined ? {} : { media: { ...parseMediaInput(headerMedia, field), field } };
    return { fromPhone, toPhone, text, structured, ...media, ...replyTo };
  }
  if (body.media === undefined) {
    assertSendableText(body.message!, maxMessageLength);
    const linkPreview = parseLinkPreview(body.link_preview, body.message!);
    return { fromPhone, toPhone, text: body.message!, ...(linkPreview !== undefined && { linkPreview }), ...replyTo };
  }
  // A caption may be empty, but must be sendable like any text.
  const text = body.message ?? '';
  assertSendableText(text, maxMessageLength, true);
  const media = parseMediaInput(body.media, 'media');
  if (body.view_once === true && media.kind !== undefined) assertViewOnceKind(media.kind);
  return { fromPhone, toPhone, text, media, ...(body.view_once === true && { structured: { viewOnce: true } }), ...replyTo };
}

const PREVIEW_TITLE_MAX = 300;
const PREVIEW_DESCRIPTION_MAX = 1_000;

/** The preview a text asks for: none, fetched (true), or given; a given one names a link of the text. */
function parseLinkPreview(raw: MessageRequestBody['link_preview'], text: string): LinkPreviewAsk | undefined {
  if (raw === undefined || raw === false) return undefined;
  const link = firstLink(text);
  if (raw === true) {
    if (link === undefined)
      throw new AppError('invalid_request', 'link_preview needs a text with an http(s) link in it.', {
        field: 'link_preview',
        problem: 'invalid',
      });
    return { fetch: true };
  }
  const url = raw.url ?? link;
  if (url === undefined || !text.includes(url) || !/^https?:\/\//i.test(url)) {
    throw new AppError(
      'invalid_request',
      'link_preview.url must be an http(s) link that appears in the text (the first link of the text by default).',
      { field: 'link_preview.url', problem: 'invalid' },
    );
  }
  const title = raw.title.trim();
  if (title === '' || [...title].length > PREVIEW_TITLE_MAX)
    throw new AppError('invalid_request', `link_preview.title must be 1 to ${PREVIEW_TITLE_MAX} characters.`, {
      field: 'link_preview.title',
      problem: 'invalid',
    });
  if (raw.description !== undefined && [...raw.description].length > PREVIEW_DESCRIPTION_MAX) {
    throw new AppError('invalid_request', `link_preview.description may have up to ${PREVIEW_DESCRIPTION_MAX} characters.`, {
      field: 'link_preview.description',
      problem: 'too_long',
    });
  }
  return {
    fetch: false,
    url,
    title,
    description: raw.description ?? null,
    ...(raw.thumbnail_media_id !== undefined && { thumbnailMediaId: raw.thumbnail_media_id }),
  };
}

/** A message id, or the 400 any unknown id gets (the chat is checked where the number is known). */
function parseReplyTo(raw: string): string {
  if (!hasIdPrefix('message', raw))
    throw new AppError('invalid_reply_to', `reply_to must be a message_id (msg_…) of this chat; "${raw.slice(0, 64)}" is not one.`, {
      field: 'reply_to',
    });
  return raw;
}

/** /sandbox/receive: a message as a send takes it, or a shared place or contact cards instead. */
export function parseSandboxReceiveInput(
  body: SandboxReceiveBody,
  maxMessageLength: number,
): MessageInput & {
  structured?: StructuredContent;
  failedDownloads?: number;
  groupId?: string;
  mentions?: E164[];
  fromLid?: string;
  withholdPhone?: boolean;
  referral?: AdReferral;
  neverResent?: boolean;
} {
  if (body.mentions !== undefined && body.group_id === undefined)
    throw new AppError('invalid_request', 'mentions are for group messages (group_id).', { field: 'mentions' });
  const inGroup =
    body.group_id === undefined ? {} : { groupId: parseGroupId(body.group_id, 'group_id'), mentions: parseMentions(body.mentions) };
  return { ...parseTap(body, maxMessageLength), ...inGroup, ...parseSenderLid(body), ...parseAdArrival(body) };
}

/**
 * A rehearsed tap on a button or a list row arrives as a Cloud API tap does: its title as the
 * text, and which one it was as the structured content; it carries nothing else.
 */
function parseTap(body: SandboxReceiveBody, maxMessageLength: number): ReturnType<typeof parseSandboxMessage> {
  const reply = body.interactive_reply;
  if (reply === undefined) return parseSandboxMessage(body, maxMessageLength);
  const other = (['message', 'media', 'location', 'contacts', 'poll'] as const).find((field) => body[field] !== undefined);
  if (other !== undefined)
    throw new AppError('invalid_request', 'A tap carries its title as its text, and nothing else: send interactive_reply alone.', {
      field: other,
      problem: 'conflict',
    });
  const tap = parseSandboxMessage({ ...body, message: reply.title }, maxMessageLength);
  return { ...tap, structured: { interactiveReply: { kind: reply.type, id: reply.id, title: reply.title } } };
}

/** A simulated ad's first message: its referral, and whether it came as a placeholder never resent. */
function parseAdArrival(body: SandboxReceiveBody): { referral?: AdReferral; neverResent?: boolean } {
  const referral = body.referral === undefined ? undefined : referralFromJson(body.referral);
  if (body.referral !== undefined && referral === undefined)
    throw new AppError('invalid_request', 'referral must name its ad: source_id, source_url, source_type or ctwa_clid.', {
      field: 'referral',
    });
  return { ...(referral !== undefined && { referral }), ...(body.placeholder === 'never_resent' && { neverResent: true }) };
}

/** A simulated LID-addressed sender: the LID, and whether the phone is withheld. */
function parseSenderLid(body: SandboxReceiveBody): { fromLid?: string; withholdPhone?: boolean } {
  if (body.from_lid === undefined) {
    if (body.withhold_phone !== undefined)
      throw new AppError('invalid_request', 'withhold_phone needs from_lid: a sender is withheld behind its LID.', {
        field: 'withhold_phone',
      });
    return {};
  }
  if (!isLid(body.from_lid))
    throw new AppError('invalid_request', 'from_lid must be a LID: digits and "@lid", e.g. 123456789012345@lid.', { field: 'from_lid' });
  return { fromLid: body.from_lid, withholdPhone: body.withhold_phone === true };
}

function parseSandboxMessage(body: SandboxReceiveBody, maxMessageLength: number): MessageInput & { failedDownloads?: number } {
  const failedDownloads = body.simulate_failed_downloads;
  if (failedDownloads !== undefined) {
    if (body.media === undefined)
      throw new AppError('invalid_request', 'simulate_failed_downloads needs media: it is how many downloads of the file fail.', {
        field: 'simulate_failed_downloads',
      });
    if (failedDownloads < 0 || failedDownloads > 10)
      throw new AppError('invalid_request', 'simulate_failed_downloads must be 0 to 10.', { field: 'simulate_failed_downloads' });
  }
  return { ...parseMessageInput(body, maxMessageLength), ...(failedDownloads !== undefined && { failedDownloads }) };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A file to send, as `media` and a template's `header_media` give it; `field` names where it is. */
function parseMediaInput(media: NonNullable<MessageRequestBody['media']>, field: string): MediaInput {
  const sources = [media.id, media.data, media.url].filter((source) => source !== undefined).length;
  if (sources !== 1)
    throw new AppError(
      'invalid_media',
      `${field} needs exactly one source: url (fetched by the gateway), id (an upload) or data (base64).`,
      {
        field,
      },
    );
  if (media.kind !== undefined && !isMediaKind(media.kind)) {
    throw new AppError('invalid_media', `${field}.kind must be one of ${mediaKinds.join(', ')}.`, { field: `${field}.kind` });
  }
  if (media.mime_type !== undefined) assertMediaType(media.mime_type, `${field}.mime_type`);
  const claims = { kind: media.kind as MediaKind | undefined, mimeType: media.mime_type, fileName: media.filename };
  if (media.id !== undefined) return { ...claims, id: media.id };
  if (media.url !== undefined) return { ...claims, url: media.url };
  const data = media.data!.replace(/\s+/g, '');
  if (data.length % 4 === 1 || !BASE64.test(data))
    throw new AppError('invalid_media', `${field}.data is not base64.`, { field: `${field}.data` });
  return { ...claims, data: Buffer.from(data, 'base64') };
}

export function parsePhoneField(value: string, field: 'from_phone' | 'to_phone' | 'phone'): E164 {
  const phone = parseE164(value);
  if (phone === undefined) {
    throw new AppError('invalid_phone_number', phoneProblem(field, value), { field });
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
    ...(message.referral != null && { referral: presentReferral(message.referral) }),
    reply_to: presentReplyTo(message.replyTo),
    status: message.status,
  };
}
