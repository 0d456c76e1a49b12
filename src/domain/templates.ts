import { AppError } from './errors.ts';

/**
 * Message templates (docs/cloud-api.md#templates): the messages a business had Meta approve, the
 * only ones WhatsApp carries to a person outside their 24-hour window. A template's header and
 * body hold numbered placeholders ({{1}}, {{2}}, …) that a send fills with text parameters.
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
}

/** A template to send: which, in which language, and the text of each placeholder, in order. */
export interface TemplateSend {
  name: string;
  language: string;
  headerParameters: string[];
  bodyParameters: string[];
}

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

/** Each placeholder of the header and body filled, no more and no fewer: what Meta would refuse with 132000, refused first. */
export function assertTemplateParameters(template: MessageTemplate, send: TemplateSend): void {
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
    components: template.components.map((component) => ({ type: component.type, format: component.format, text: component.text })),
  };
}
