import type { MediaKind } from '../../domain/media.ts';
import type { MessageContentKind } from '../../domain/model.ts';
import { parseE164, type E164 } from '../../domain/phone.ts';
import { adReferral, type AdReferral } from '../../domain/referral.ts';
import type { InteractiveReply, SharedContact, StructuredContent } from '../../domain/structured-content.ts';

// Meta's `messages` webhook (object whatsapp_business_account, entry[].changes[] of field
// `messages`) read into what the engine reports: messages, reactions and statuses for one of our
// phone numbers. Pure: a file is described by Meta's media id, which the engine downloads on
// demand. Unknown message types are kept as `unavailable` with Meta's type named, never dropped.

export interface CloudIncomingMedia {
  kind: MediaKind;
  mediaId: string;
  mimeType: string | null;
  fileName: string | null;
}

interface CloudIncomingMessage {
  fromPhone: E164;
  senderName: string | undefined;
  engineMessageId: string;
  receivedAt: Date;
  text: string;
  contentKind: MessageContentKind;
  media?: CloudIncomingMedia;
  structured?: StructuredContent;
  quotedEngineId?: string;
  referral?: AdReferral;
}

interface CloudIncomingReaction {
  fromPhone: E164;
  targetEngineId: string;
  emoji: string;
  at: Date;
}

interface CloudStatus {
  engineMessageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** Meta's error code for a failed message, such as '131026'; null otherwise. */
  errorCode: string | null;
  at: Date;
}

export interface CloudDelivery {
  messages: CloudIncomingMessage[];
  reactions: CloudIncomingReaction[];
  statuses: CloudStatus[];
}

type Json = Record<string, unknown>;

const MEDIA_TYPES: Record<string, MediaKind> = { image: 'image', video: 'video', audio: 'audio', document: 'document', sticker: 'sticker' };

/** What a delivery says of the phone number with Meta's id `phoneNumberId`; changes for other numbers are left out. */
export function readCloudDelivery(payload: unknown, phoneNumberId: string): CloudDelivery {
  const delivery: CloudDelivery = { messages: [], reactions: [], statuses: [] };
  if (!isObject(payload) || payload.object !== 'whatsapp_business_account' || !Array.isArray(payload.entry)) return delivery;
  for (const entry of payload.entry) {
    for (const change of isObject(entry) && Array.isArray(entry.changes) ? entry.changes : []) {
      if (!isObject(change) || change.field !== 'messages' || !isObject(change.value)) continue;
      const value = change.value;
      if (!isObject(value.metadata) || value.metadata.phone_number_id !== phoneNumberId) continue;
      const names = namesOf(value.contacts);
      for (const raw of arrayOf(value.messages)) readMessage(raw, names, delivery);
      for (const raw of arrayOf(value.statuses)) {
        const status = statusOf(raw);
        if (status !== undefined) delivery.statuses.push(status);
      }
    }
  }
  return delivery;
}

function readMessage(raw: Json, names: Map<string, string>, delivery: CloudDelivery): void {
  const fromPhone = typeof raw.from === 'string' ? parseE164(`+${raw.from}`) : undefined;
  if (fromPhone === undefined || typeof raw.id !== 'string' || raw.id === '') return;
  const at = timeOf(raw.timestamp);
  if (raw.type === 'reaction' && isObject(raw.reaction) && typeof raw.reaction.message_id === 'string') {
    const emoji = typeof raw.reaction.emoji === 'string' ? raw.reaction.emoji : '';
    delivery.reactions.push({ fromPhone, targetEngineId: raw.reaction.message_id, emoji, at });
    return;
  }
  const quoted = isObject(raw.context) && typeof raw.context.id === 'string' ? { quotedEngineId: raw.context.id } : {};
  const referral = isObject(raw.referral) ? referralOf(raw.referral) : undefined;
  delivery.messages.push({
    fromPhone,
    senderName: names.get(String(raw.from)),
    engineMessageId: raw.id,
    receivedAt: at,
    ...contentOf(raw),
    ...quoted,
    ...(referral !== undefined && { referral }),
  });
}

/** The message's text, kind and structured content, by Meta's type. */
function contentOf(raw: Json): Pick<CloudIncomingMessage, 'text' | 'contentKind' | 'media' | 'structured'> {
  const type = typeof raw.type === 'string' ? raw.type : 'unknown';
  const body = isObject(raw[type]) ? (raw[type] as Json) : {};
  if (type === 'text') return { text: stringOf(body.body), contentKind: 'text' };
  const mediaKind = MEDIA_TYPES[type];
  if (mediaKind !== undefined && typeof body.id === 'string') {
    const kind = mediaKind === 'audio' && body.voice === true ? 'voice' : mediaKind;
    return {
      text: stringOf(body.caption),
      contentKind: kind,
      media: { kind, mediaId: body.id, mimeType: nullable(body.mime_type), fileName: nullable(body.filename) },
    };
  }
  if (type === 'location' && typeof body.latitude === 'number' && typeof body.longitude === 'number') {
    const location = {
      latitude: body.latitude,
      longitude: body.longitude,
      name: nullable(body.name),
      address: nullable(body.address),
      url: nullable(body.url),
    };
    return { text: '', contentKind: 'location', structured: { location } };
  }
  if (type === 'contacts' && Array.isArray(raw.contacts)) {
    const contacts = (raw.contacts as unknown[]).filter(isObject).map(sharedContactOf);
    return { text: '', contentKind: 'contact', structured: { contacts } };
  }
  // A tap on a reply button or a list row answers with its title as the text, and its id beside it.
  if (type === 'interactive') {
    const [kind, reply] = isObject(body.button_reply)
      ? (['button', body.button_reply] as const)
      : isObject(body.list_reply)
        ? (['list', body.list_reply] as const)
        : (['button', {}] as const);
    return tapped(kind, reply.id, stringOf(reply.title));
  }
  // A template's quick-reply button: its payload is the id the template's send gave it.
  if (type === 'button') return tapped('quick_reply', body.payload, stringOf(body.text));
  return { text: `[${type}]`, contentKind: 'unavailable' };
}

/** A tap's text (the title), with the tapped id kept as its structured content when Meta gave one. */
function tapped(
  kind: InteractiveReply['kind'],
  id: unknown,
  title: string,
): Pick<CloudIncomingMessage, 'text' | 'contentKind' | 'structured'> {
  if (typeof id !== 'string' || id === '') return { text: title, contentKind: 'text' };
  return { text: title, contentKind: 'text', structured: { interactiveReply: { kind, id, title } } };
}

function sharedContactOf(raw: Json): SharedContact {
  const name = isObject(raw.name) ? stringOf(raw.name.formatted_name) : '';
  const phones = arrayOf(raw.phones).flatMap((phone) => {
    const digits = typeof phone.wa_id === 'string' ? phone.wa_id : typeof phone.phone === 'string' ? phone.phone.replace(/[^\d]/g, '') : '';
    const parsed = parseE164(`+${digits}`);
    return parsed === undefined ? [] : [parsed];
  });
  return { name: name === '' ? (phones[0] ?? 'Contact') : name, phones, vcard: null };
}

function statusOf(raw: Json): CloudStatus | undefined {
  const status = raw.status;
  if (typeof raw.id !== 'string' || (status !== 'sent' && status !== 'delivered' && status !== 'read' && status !== 'failed'))
    return undefined;
  const firstError = arrayOf(raw.errors)[0];
  const errorCode = status === 'failed' && firstError !== undefined && typeof firstError.code === 'number' ? String(firstError.code) : null;
  return { engineMessageId: raw.id, status, errorCode, at: timeOf(raw.timestamp) };
}

/** Meta's referral object has our field names already, in snake case (ADR 0051). */
function referralOf(raw: Json): AdReferral | undefined {
  return adReferral({
    sourceType: raw.source_type,
    sourceId: raw.source_id,
    sourceUrl: raw.source_url,
    headline: raw.headline,
    body: raw.body,
    mediaType: raw.media_type,
    imageUrl: raw.image_url,
    videoUrl: raw.video_url,
    thumbnailUrl: raw.thumbnail_url,
    ctwaClid: raw.ctwa_clid,
  });
}

function namesOf(contacts: unknown): Map<string, string> {
  const names = new Map<string, string>();
  for (const contact of arrayOf(contacts)) {
    const name = isObject(contact.profile) ? contact.profile.name : undefined;
    if (typeof contact.wa_id === 'string' && typeof name === 'string' && name !== '') names.set(contact.wa_id, name);
  }
  return names;
}

/** Meta's timestamps are Unix seconds, as strings. */
function timeOf(value: unknown): Date {
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1_000) : new Date();
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function nullable(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
