import { AppError } from './errors.ts';
import type { MediaKind } from './media.ts';
import { assertButtonParameters, type TemplateButton, type TemplateButtonParameter } from './template-buttons.ts';

/**
 * Message templates (docs/cloud-api.md#templates): the messages a business had Meta approve, the
 * only ones WhatsApp carries to a person outside their 24-hour window. A template's header and
 * body hold numbered placeholders ({{1}}, {{2}}, …) that a send fills with text parameters; a
 * header may instead be an image, a video or a document, which a send gives as its file; and
 * some buttons take a parameter (template-buttons.ts).
 */
export interface MessageTemplate {
  name: string;
  language: string;
  /** Meta's review status: APPROVED, PENDING, REJECTED, PAUSED, DISABLED. Only an approved one is sent. */
  status: string;
  category: string | null;
  components: readonly TemplateComponent[];
}

interface TemplateComponent {
  /** HEADER, BODY, FOOTER or BUTTONS, as Meta names them. */
  type: string;
  /** A header's format: TEXT, IMAGE, VIDEO, DOCUMENT or LOCATION. */
  format: string | null;
  text: string | null;
  /** A BUTTONS component's buttons, in order; empty for the others. */
  buttons: readonly TemplateButton[];
}

/**
 * A template to send: which, in which language, the text of each placeholder in order, and the
 * parameters of its buttons. A media header's file is the message's own media, not held here.
 */
export interface TemplateSend {
  name: string;
  language: string;
  headerParameters: string[];
  bodyParameters: string[];
  /** Absent on messages stored before buttons took parameters, which had none. */
  buttonParameters?: TemplateButtonParameter[];
}

/** The media kind each of Meta's media header formats is sent as. */
const HEADER_MEDIA_KINDS: Readonly<Record<string, MediaKind>> = { IMAGE: 'image', VIDEO: 'video', DOCUMENT: 'document' };

/** How many parameters a component's text asks for: its highest placeholder number. */
function placeholderCount(text: string | null): number {
  let highest = 0;
  for (const match of (text ?? '').matchAll(/\{\{\s*(\d+)\s*\}\}/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}

function componentText(template: MessageTemplate, type: 'HEADER' | 'BODY'): string | null {
  const component = template.components.find((each) => each.type.toUpperCase() === type);
  if (component === undefined) return null;
  if (type === 'HEADER' && component.format !== null && component.format.toUpperCase() !== 'TEXT') return null;
  return component.text;
}

/** The approved template a send names, or 404 template_not_found (naming what exists in other languages, if any). */
export function findApprovedTemplate(
  templates: readonly MessageTemplate[],
  send: Pick<TemplateSend, 'name' | 'language'>,
): MessageTemplate {
  const found = templates.find((template) => template.name === send.name && template.language === send.language);
  if (found !== undefined && found.status.toUpperCase() === 'APPROVED') return found;
  const languages = templates.filter((template) => template.name === send.name).map((template) => template.language);
  const why =
    found !== undefined
      ? `is ${found.status.toLowerCase()}, not approved`
      : languages.length > 0
        ? `has no ${send.language} version (it has ${languages.join(', ')})`
        : 'does not exist in the business account';
  throw new AppError('template_not_found', `The template ${send.name} ${why}.`, { field: 'template.name' });
}

/**
 * Each placeholder of the header and body filled, no more and no fewer, a media header given its
 * file (of its kind) and a text one none, and the buttons' parameters each fitting its button:
 * what Meta would refuse with 132000, refused first. `headerMedia` is the kind of the send's file.
 */
export function assertTemplateParameters(template: MessageTemplate, send: TemplateSend, headerMedia?: MediaKind): void {
  assertHeaderMedia(template, headerMedia);
  for (const [part, given] of [
    ['header', send.headerParameters],
    ['body', send.bodyParameters],
  ] as const) {
    const expected = placeholderCount(componentText(template, part === 'header' ? 'HEADER' : 'BODY'));
    if (given.length !== expected)
      throw new AppError(
        'invalid_template_parameters',
        `The template ${template.name} (${template.language}) takes ${expected} ${part} parameter${expected === 1 ? '' : 's'}; ${given.length} ${given.length === 1 ? 'was' : 'were'} given.`,
        { field: `template.${part}_parameters`, expected },
      );
  }
  const buttons = template.components.filter((each) => each.type.toUpperCase() === 'BUTTONS').flatMap((each) => each.buttons);
  assertButtonParameters({ name: template.name, buttons }, send.buttonParameters ?? []);
}

/** The header's media kind, when it is an image, a video or a document. */
function headerMediaKind(template: MessageTemplate): MediaKind | undefined {
  const format = template.components.find((each) => each.type.toUpperCase() === 'HEADER')?.format?.toUpperCase();
  return format === undefined ? undefined : HEADER_MEDIA_KINDS[format];
}

function assertHeaderMedia(template: MessageTemplate, given: MediaKind | undefined): void {
  const expected = headerMediaKind(template);
  const refuse = (message: string) =>
    new AppError('invalid_template_parameters', `The template ${template.name} (${template.language}) ${message}`, {
      field: 'template.header_media',
    });
  if (expected === undefined && given !== undefined) throw refuse('has no media header; send it without header_media.');
  if (expected !== undefined && given === undefined) throw refuse(`has a ${expected} header: give its file as header_media.`);
  if (expected !== undefined && given !== expected) throw refuse(`has a ${expected} header; header_media is sent as ${given}.`);
}

/** A template as the API lists it. */
export function presentTemplate(template: MessageTemplate) {
  return {
    name: template.name,
    language: template.language,
    status: template.status,
    category: template.category,
    header_parameters: placeholderCount(componentText(template, 'HEADER')),
    body_parameters: placeholderCount(componentText(template, 'BODY')),
    header_media: headerMediaKind(template) ?? null,
    components: template.components.map((component) => ({
      type: component.type,
      format: component.format,
      text: component.text,
      buttons: component.buttons.map((button) => ({ ...button })),
    })),
  };
}
