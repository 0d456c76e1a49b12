import { AppError } from '../domain/errors.ts';
import { parseE164, type E164 } from '../domain/phone.ts';
import {
  isValidLocation,
  POLL_MAX_OPTIONS,
  POLL_MIN_OPTIONS,
  type SharedContact,
  type SharedLocation,
  type SharedPoll,
  type StructuredContent,
} from '../domain/structured-content.ts';
import { buildVcard, phonesOfVcard, readVcard } from '../domain/vcards.ts';
import type { ContactRequestBody, LocationRequestBody, MessageRequestBody, PollRequestBody, TemplateRequestBody } from './schemas.ts';
import type { TemplateSend } from '../domain/templates.ts';
import { parseInteractive } from '../domain/interactive.ts';

/** WhatsApp's own bounds on a poll's question and each option, in characters. */
const POLL_QUESTION_MAX = 255;
const POLL_OPTION_MAX = 100;
const MAX_CONTACT_CARDS = 10;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** The content kinds a message may carry, of which a send holds exactly one (besides its text). */
const CONTENT_KINDS = ['media', 'location', 'contacts', 'poll', 'template', 'interactive'] as const;

/**
 * The one content kind of a request beyond its text, checked for company: two kinds together, a
 * text beside cards or a poll (which carry their own words), view_once without a file and a
 * link preview with anything but a text are each refused, naming the field at fault.
 */
export function assertOneContentKind(
  body: Pick<
    MessageRequestBody,
    'message' | 'media' | 'location' | 'contacts' | 'poll' | 'template' | 'interactive' | 'view_once' | 'link_preview'
  >,
): void {
  const given = CONTENT_KINDS.filter((kind) => body[kind] !== undefined);
  if (given.length > 1) conflict(given[1]!, `A message carries one of ${CONTENT_KINDS.join(', ')}; this one has ${given.join(' and ')}.`);
  const kind = given[0];
  if (body.message !== undefined && (kind === 'contacts' || kind === 'poll' || kind === 'template' || kind === 'interactive'))
    conflict('message', `${OWN_WORDS[kind]}; send the text as a message of its own.`);
  if (body.view_once === true && kind !== 'media')
    conflict('view_once', 'view_once is for a file (an image, a video or a voice note) in media.');
  if (body.link_preview !== undefined && body.link_preview !== false && kind !== undefined)
    conflict('link_preview', 'link_preview is for a text message with a link; it cannot go with media, a location, contacts or a poll.');
}

const OWN_WORDS = {
  poll: 'A poll carries its question',
  contacts: 'Contact cards carry their names',
  template: 'A template carries its approved text',
  interactive: 'An interactive message carries its text as interactive.body',
} as const;

function conflict(field: string, message: string): never {
  throw new AppError('invalid_request', message, { field, problem: 'conflict' });
}

/** A place, a set of cards or a poll, checked; undefined when the request carries none. */
export function parseStructuredInput(
  body: Pick<MessageRequestBody, 'location' | 'contacts' | 'poll' | 'template' | 'interactive'>,
): StructuredContent | undefined {
  if (body.template !== undefined) return { template: parseTemplate(body.template) };
  if (body.interactive !== undefined) return { interactive: parseInteractive(body.interactive) };
  if (body.location !== undefined) return { location: parseLocation(body.location) };
  if (body.contacts !== undefined) return { contacts: parseContacts(body.contacts) };
  if (body.poll !== undefined) return { poll: parsePoll(body.poll) };
  return undefined;
}

/** A template to send; whether the template takes these parameters is the Cloud API engine's to check, against the template itself. */
function parseTemplate(raw: TemplateRequestBody): TemplateSend {
  return {
    name: raw.name,
    language: raw.language,
    headerParameters: raw.header_parameters ?? [],
    bodyParameters: raw.body_parameters ?? [],
    ...(raw.button_parameters !== undefined && { buttonParameters: raw.button_parameters.map((each) => ({ ...each })) }),
  };
}

function parseLocation(raw: LocationRequestBody): SharedLocation {
  const location = { latitude: raw.latitude, longitude: raw.longitude, name: raw.name ?? null, address: raw.address ?? null, url: null };
  if (!isValidLocation(location))
    throw new AppError('invalid_request', 'location needs a latitude within ±90 and a longitude within ±180.', { field: 'location' });
  return location;
}

function parseContacts(cards: readonly ContactRequestBody[]): SharedContact[] {
  if (cards.length < 1 || cards.length > MAX_CONTACT_CARDS)
    throw new AppError('invalid_request', `contacts holds 1 to ${MAX_CONTACT_CARDS} cards.`, { field: 'contacts' });
  return cards.map((card, index) => parseContact(card, `contacts[${index}]`));
}

/** One card: a vCard given whole (checked, its name and phones read from it), or one written from the fields. */
function parseContact(card: ContactRequestBody, field: string): SharedContact {
  if (card.vcard !== undefined) {
    const extra = (['name', 'phones', 'organization', 'emails'] as const).find((key) => card[key] !== undefined);
    if (extra !== undefined)
      throw new AppError(
        'invalid_contact',
        `${field} gives a vcard and ${extra}; give either the vcard or the fields it is written from.`,
        { field: `${field}.${extra}` },
      );
    const read = readVcard(card.vcard);
    if ('problem' in read) throw new AppError('invalid_contact', `${field}.vcard ${read.problem}.`, { field: `${field}.vcard` });
    return { name: read.name, phones: phonesOfVcard(card.vcard), vcard: card.vcard };
  }
  if (card.name === undefined || card.name.trim() === '')
    throw new AppError('invalid_contact', `${field} needs a name (or a whole vcard).`, { field: `${field}.name` });
  if (card.phones === undefined)
    throw new AppError('invalid_contact', `${field} needs phones (or a whole vcard).`, { field: `${field}.phones` });
  const phones = card.phones.map((raw, at) => parseCardPhone(raw, `${field}.phones[${at}]`));
  const badEmail = (card.emails ?? []).findIndex((email) => !EMAIL.test(email));
  if (badEmail >= 0)
    throw new AppError('invalid_contact', `${field}.emails[${badEmail}] is not an e-mail address.`, {
      field: `${field}.emails[${badEmail}]`,
    });
  const vcard = buildVcard({
    name: card.name,
    phones,
    ...(card.organization !== undefined && { organization: card.organization }),
    ...(card.emails !== undefined && { emails: card.emails }),
  });
  return { name: card.name, phones, vcard };
}

function parseCardPhone(raw: string, field: string): E164 {
  const phone = parseE164(raw);
  if (phone === undefined) throw new AppError('invalid_phone_number', `${field} is not a valid international phone number.`, { field });
  return phone;
}

/** A poll WhatsApp shows as sent: a question, 2 to 12 distinct options, and a choice count within them. */
function parsePoll(raw: PollRequestBody): SharedPoll {
  const question = raw.question.trim();
  if (question === '' || [...question].length > POLL_QUESTION_MAX)
    throw new AppError('invalid_poll', `poll.question must be 1 to ${POLL_QUESTION_MAX} characters.`, { field: 'poll.question' });
  if (raw.options.length < POLL_MIN_OPTIONS || raw.options.length > POLL_MAX_OPTIONS) {
    throw new AppError(
      'invalid_poll',
      `poll.options must hold ${POLL_MIN_OPTIONS} to ${POLL_MAX_OPTIONS} options; it has ${raw.options.length}.`,
      { field: 'poll.options' },
    );
  }
  const options = raw.options.map((option) => option.trim());
  options.forEach((option, index) => {
    if (option === '' || [...option].length > POLL_OPTION_MAX)
      throw new AppError('invalid_poll', `poll.options[${index}] must be 1 to ${POLL_OPTION_MAX} characters.`, {
        field: `poll.options[${index}]`,
      });
    // A vote names its options by a hash of their text, so two equal options could not be told apart.
    if (options.indexOf(option) !== index)
      throw new AppError(
        'invalid_poll',
        `poll.options[${index}] repeats poll.options[${options.indexOf(option)}]; options must be unique.`,
        { field: `poll.options[${index}]` },
      );
  });
  const selectableCount = raw.selectable_count ?? 1;
  if (!Number.isInteger(selectableCount) || selectableCount < 1 || selectableCount > options.length) {
    throw new AppError('invalid_poll', `poll.selectable_count must be 1 to ${options.length} (the number of options).`, {
      field: 'poll.selectable_count',
    });
  }
  return { question, options, selectableCount };
}
