import type { MediaKind } from '../../domain/media.ts';
import type { SharedContact, SharedLocation } from '../../domain/structured-content.ts';
import type { TemplateSend } from '../../domain/templates.ts';
import type { TemplateButtonParameter } from '../../domain/template-buttons.ts';
import type { InteractiveMessage } from '../../domain/interactive.ts';
import { capabilityDeclined, declineUncarried, type OptionalContent } from '../capability-declined.ts';
import type { MessageRef, OutgoingMessage } from '../engine.ts';

// Our outgoing messages as Meta's Cloud API message objects (the body of POST
// /{phone-number-id}/messages, without messaging_product and recipient_type, which graph-api.ts
// adds). Pure: a file is named by the media id its upload answered.

/** A Cloud API message object: `type` and the object of that type, `to`, and `context` for a reply. */
export type CloudMessageBody = Record<string, unknown> & { to: string; type: string };

/** Meta's message type for each of our media kinds: a voice note is audio (Meta plays an OGG/Opus one as a voice note). */
const CLOUD_MEDIA_TYPE: Record<MediaKind, 'image' | 'video' | 'audio' | 'document' | 'sticker'> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  voice: 'audio',
  document: 'document',
  sticker: 'sticker',
};

/** What a Cloud API message cannot carry: Meta has no polls and no view-once files. */
export const CLOUD_UNCARRIED: readonly OptionalContent[] = ['poll', 'viewOnce'];

/** Meta's `to`: the phone's digits, without the plus. */
function cloudRecipient(phone: string): string {
  return phone.replace(/^\+/, '');
}

/**
 * The message object for a direct message; `mediaId` is the uploaded file's id when it carries
 * one. What the Cloud API cannot carry (a poll, view-once, a group) is declined before anything
 * is sent.
 */
export function toCloudMessage(request: OutgoingMessage, mediaId?: string): CloudMessageBody {
  if ('toGroup' in request) throw capabilityDeclined('cloud', 'send_to_group', 'send to groups: the Cloud API has no groups');
  const to = cloudRecipient(request.toPhone);
  const context = request.replyTo === undefined ? {} : { context: { message_id: request.replyTo.engineMessageId } };
  return { to, ...context, ...contentOf(request, mediaId) } as CloudMessageBody;
}

function contentOf(request: OutgoingMessage, mediaId: string | undefined): Record<string, unknown> & { type: string } {
  const structured = request.structured;
  if (structured !== undefined && 'template' in structured)
    return { type: 'template', template: templateOf(structured.template, headerMediaOf(request.media, mediaId)) };
  if (structured !== undefined && 'interactive' in structured)
    return { type: 'interactive', interactive: interactiveOf(structured.interactive) };
  declineUncarried('cloud', CLOUD_UNCARRIED, structured);
  if (request.media !== undefined && mediaId !== undefined) {
    const type = CLOUD_MEDIA_TYPE[request.media.kind];
    // Meta shows a caption on images, videos and documents only, and a file name on documents.
    const caption = request.text !== '' && (type === 'image' || type === 'video' || type === 'document') ? { caption: request.text } : {};
    const fileName = type === 'document' && request.media.fileName !== null ? { filename: request.media.fileName } : {};
    return { type, [type]: { id: mediaId, ...caption, ...fileName } };
  }
  if (structured !== undefined && 'location' in structured) return { type: 'location', location: locationOf(structured.location) };
  if (structured !== undefined && 'contacts' in structured) return { type: 'contacts', contacts: structured.contacts.map(contactOf) };
  const preview = structured !== undefined && 'linkPreview' in structured;
  return { type: 'text', text: { body: request.text, preview_url: preview } };
}

/**
 * Meta's template object: name, language and a component per part with parameters: the header's
 * texts or its uploaded file, the body's texts, and one component per button given a parameter.
 */
function templateOf(send: TemplateSend, headerMedia: Record<string, unknown> | undefined): Record<string, unknown> {
  const texts = (parameters: readonly string[]) => parameters.map((text) => ({ type: 'text', text }));
  const header = headerMedia !== undefined ? [headerMedia] : texts(send.headerParameters);
  const components = [
    ...(header.length > 0 ? [{ type: 'header', parameters: header }] : []),
    ...(send.bodyParameters.length > 0 ? [{ type: 'body', parameters: texts(send.bodyParameters) }] : []),
    ...(send.buttonParameters ?? []).map(buttonComponentOf),
  ];
  return { name: send.name, language: { code: send.language }, ...(components.length > 0 && { components }) };
}

/** A media header's parameter: the uploaded file by id, of the header's type, with a document's file name. */
function headerMediaOf(media: OutgoingMessage['media'], mediaId: string | undefined): Record<string, unknown> | undefined {
  if (media === undefined || mediaId === undefined) return undefined;
  const type = CLOUD_MEDIA_TYPE[media.kind];
  const fileName = type === 'document' && media.fileName !== null ? { filename: media.fileName } : {};
  return { type, [type]: { id: mediaId, ...fileName } };
}

/** A button's parameter: a URL button's suffix as a text, a quick-reply button's payload. */
function buttonComponentOf(parameter: TemplateButtonParameter): Record<string, unknown> {
  return {
    type: 'button',
    sub_type: parameter.type,
    index: String(parameter.index),
    parameters: [parameter.type === 'url' ? { type: 'text', text: parameter.value } : { type: 'payload', payload: parameter.value }],
  };
}

/** Meta's interactive object: `button` with reply buttons, `list` with sections of rows, or `cta_url`. */
function interactiveOf(message: InteractiveMessage): Record<string, unknown> {
  const frame = {
    ...(message.header !== null && { header: { type: 'text', text: message.header } }),
    body: { text: message.body },
    ...(message.footer !== null && { footer: { text: message.footer } }),
  };
  if (message.kind === 'buttons')
    return { type: 'button', ...frame, action: { buttons: message.buttons.map((button) => ({ type: 'reply', reply: button })) } };
  if (message.kind === 'list') {
    const sections = message.sections.map((section) => ({
      ...(section.title !== null && { title: section.title }),
      rows: section.rows.map((row) => ({
        id: row.id,
        title: row.title,
        ...(row.description !== null && { description: row.description }),
      })),
    }));
    return { type: 'list', ...frame, action: { button: message.button, sections } };
  }
  return { type: 'cta_url', ...frame, action: { name: 'cta_url', parameters: { display_text: message.displayText, url: message.url } } };
}

function locationOf(location: SharedLocation): Record<string, unknown> {
  return {
    latitude: location.latitude,
    longitude: location.longitude,
    ...(location.name !== null && { name: location.name }),
    ...(location.address !== null && { address: location.address }),
  };
}

function contactOf(contact: SharedContact): Record<string, unknown> {
  return {
    name: { formatted_name: contact.name, first_name: contact.name },
    phones: contact.phones.map((phone) => ({ phone, wa_id: cloudRecipient(phone), type: 'CELL' })),
  };
}

/** A reaction to `target` (an empty emoji takes ours away, as on WhatsApp). */
export function toCloudReaction(target: MessageRef, emoji: string): CloudMessageBody {
  if (target.groupId !== undefined) throw capabilityDeclined('cloud', 'send_to_group', 'act in groups: the Cloud API has no groups');
  return { to: cloudRecipient(target.chatPhone), type: 'reaction', reaction: { message_id: target.engineMessageId, emoji } };
}
