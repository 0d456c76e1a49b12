import type { E164 } from './phone.ts';
import type { TemplateSend } from './templates.ts';
import type { InteractiveMessage } from './interactive.ts';

/** A place someone shared. `name` and `address` are what the sender's app attached, if anything. */
export interface SharedLocation {
  latitude: number;
  longitude: number;
  name: string | null;
  address: string | null;
  url: string | null;
}

/** A contact card: its name, the phones it lists that parse as numbers, and the card itself. */
export interface SharedContact {
  name: string;
  phones: E164[];
  /** The vCard as WhatsApp carried it, for systems that want every field. */
  vcard: string | null;
}

/** A poll: its question, its options in order, and how many of them one voter may choose. */
export interface SharedPoll {
  question: string;
  options: string[];
  selectableCount: number;
}

/** The preview WhatsApp shows under a text with a link. The thumbnail travels, but is not kept. */
export interface LinkPreview {
  url: string;
  title: string;
  description: string | null;
}

/** A preview to fetch from the text's first link, or one given whole (its thumbnail an image upload of the account). */
export type LinkPreviewAsk =
  | { fetch: true }
  | { fetch: false; url: string; title: string; description: string | null; thumbnailMediaId?: string };

/**
 * A person's tap on a reply button, a list row or a template's quick-reply button (Cloud API). Its
 * text is the title; the id (a quick-reply button's payload) is what a bot branches on.
 */
export interface InteractiveReply {
  kind: 'button' | 'list' | 'quick_reply';
  id: string;
  title: string;
}

/**
 * What a message carries besides text and files. Stored with the message (as JSON) and sent to
 * webhooks under its own field, so nothing a person sends is dropped for lack of a type. The
 * kinds exclude each other: a send carries one content kind, and `viewOnce` belongs to a file,
 * `linkPreview` to a text (docs/adr/0031-rich-content.md).
 */
export type StructuredContent =
  | { location: SharedLocation }
  | { contacts: SharedContact[] }
  | { poll: SharedPoll }
  | { viewOnce: true }
  | { linkPreview: LinkPreview }
  /** A message template of a Cloud API number (docs/cloud-api.md#templates); its text is the body as sent. */
  | { template: TemplateSend }
  /** Reply buttons, a list or a call-to-action link of a Cloud API number; its text is the body. */
  | { interactive: InteractiveMessage }
  /** A tap on one of them (or on a template's quick-reply button), received: its text is the title. */
  | { interactiveReply: InteractiveReply };

/** What a send may carry: everything but a tap, which only a person makes. */
export type SendableContent = Exclude<StructuredContent, { interactiveReply: InteractiveReply }>;

/** A stored message's content as its send carries it; a tap, which only a received message has, goes as its text. */
export function sendableContent(content: StructuredContent | null): SendableContent | undefined {
  return content === null || 'interactiveReply' in content ? undefined : content;
}

export const POLL_MIN_OPTIONS = 2;
export const POLL_MAX_OPTIONS = 12;

export function isValidLocation(location: SharedLocation): boolean {
  return (
    Number.isFinite(location.latitude) &&
    Number.isFinite(location.longitude) &&
    Math.abs(location.latitude) <= 90 &&
    Math.abs(location.longitude) <= 180
  );
}

/** One option's count of voters, in the poll's order. */
export interface PollTally {
  voters: number;
  options: { option: string; votes: number }[];
}

/** The poll's current selections, one per voter, counted per option. */
export function tallyPoll(poll: SharedPoll, selections: readonly (readonly string[])[]): PollTally {
  const counts = new Map(poll.options.map((option) => [option, 0]));
  for (const selection of selections)
    for (const option of new Set(selection)) if (counts.has(option)) counts.set(option, counts.get(option)! + 1);
  return { voters: selections.length, options: poll.options.map((option) => ({ option, votes: counts.get(option)! })) };
}

export function presentPoll(poll: SharedPoll, tally?: PollTally) {
  return {
    question: poll.question,
    options: [...poll.options],
    selectable_count: poll.selectableCount,
    ...(tally !== undefined && { results: { voters: tally.voters, options: tally.options.map((entry) => ({ ...entry })) } }),
  };
}

/** The structured part as webhooks and answers show it; a poll with its tally where one is given. */
export function presentStructured(content: StructuredContent | null, tally?: PollTally) {
  if (content === null) return {};
  if ('location' in content) return { location: content.location };
  if ('contacts' in content) return { contacts: content.contacts };
  if ('poll' in content) return { poll: presentPoll(content.poll, tally) };
  if ('viewOnce' in content) return { view_once: true as const };
  // A template shows as its text, the body as the person reads it.
  if ('template' in content || 'interactive' in content) return {};
  if ('interactiveReply' in content) {
    const { kind, id, title } = content.interactiveReply;
    return { interactive_reply: { type: kind, id, title } };
  }
  return { link_preview: { ...content.linkPreview } };
}

/** The poll a message carries, if it is one. */
export function pollOf(content: StructuredContent | null): SharedPoll | undefined {
  return content !== null && 'poll' in content ? content.poll : undefined;
}

/** The content kind a structured message is stored as; undefined for the extras that ride on a text or file. */
export function structuredKind(content: StructuredContent | undefined | null): 'location' | 'contact' | 'poll' | undefined {
  if (content === undefined || content === null) return undefined;
  if ('location' in content) return 'location';
  if ('contacts' in content) return 'contact';
  if ('poll' in content) return 'poll';
  return undefined;
}
