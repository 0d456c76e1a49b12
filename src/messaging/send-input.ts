/**
 * A send as the messaging use case takes it, whichever way it came in (the HTTP API's body, the
 * dashboard's form, an integration): parsed and checked, with the recipient not yet resolved.
 */
import { AppError } from '../domain/errors.ts';
import type { MediaClaims, MediaKind } from '../domain/media.ts';
import type { E164 } from '../domain/phone.ts';
import type { LinkPreviewAsk, StructuredContent } from '../domain/structured-content.ts';
import type { SendSchedule } from './governor/send-governor.ts';

export interface MessageInput {
  fromPhone: E164;
  toPhone: E164;
  text: string;
  media?: MediaInput;
  /** A place, cards or a poll instead of a text; or, beside a file, that it is view-once. */
  structured?: StructuredContent;
  /** A text's link preview: fetched by the gateway, or given by the caller. */
  linkPreview?: LinkPreviewAsk;
  /** The message_id of the message this one answers. */
  replyTo?: string;
}

/** What a send names as its recipient: a phone, or a group with the members it mentions. */
export type SendInput = Omit<MessageInput, 'toPhone'> &
  (
    | { toPhone: E164; toGroup?: undefined; toLid?: undefined }
    /** A person by LID (`to_phone: "…@lid"`): sent to the phone from_phone's map knows for it. */
    | { toLid: string; toPhone?: undefined; toGroup?: undefined }
    | { toGroup: string; mentions: E164[]; toPhone?: undefined; toLid?: undefined }
  ) &
  SendTiming;

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
  /** Where the request gave the file, when not in `media` (a template's `template.header_media`): refusals name it. */
  field?: string;
}

/** Only a photo, a video or a voice note can be opened once; WhatsApp has no view-once for the rest. */
export function assertViewOnceKind(kind: MediaKind): void {
  if (VIEW_ONCE_KINDS.includes(kind)) return;
  throw new AppError('invalid_request', `view_once is for an image, a video or a voice note; this file is sent as ${kind}.`, {
    field: 'view_once',
    problem: 'not_allowed',
  });
}

const VIEW_ONCE_KINDS: readonly MediaKind[] = ['image', 'video', 'voice'];
/** The first http(s) link of a text, as WhatsApp's apps find the one to preview. */
export function firstLink(text: string): string | undefined {
  return /https?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]'}]/i.exec(text)?.[0];
}
