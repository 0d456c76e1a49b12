import { AppError } from '../../domain/errors.ts';
import type { MediaKind } from '../../domain/media.ts';
import { assertTemplateParameters, findApprovedTemplate, type MessageTemplate, type TemplateSend } from '../../domain/templates.ts';

// The rehearsal templates of sandbox numbers (docs/cloud-api.md#rehearse-in-the-sandbox): a
// developer building on the Cloud API lists, reads and sends templates in test mode as on a cloud
// number, checked by the same rules (src/domain/templates.ts), with the filled text delivered.

/** What every sandbox number offers: Meta-shaped, approved, one with text parameters and quick-reply buttons, one without either. */
export const SEEDED_TEMPLATES: readonly MessageTemplate[] = [
  {
    name: 'order_ready',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', buttons: [] },
      { type: 'BODY', format: null, text: 'Hello {{1}}, your order is ready for pickup at {{2}}.', buttons: [] },
      { type: 'FOOTER', format: null, text: 'Reply STOP to opt out', buttons: [] },
      {
        type: 'BUTTONS',
        format: null,
        text: null,
        buttons: [
          { type: 'QUICK_REPLY', text: 'Change pickup', url: null },
          { type: 'QUICK_REPLY', text: 'Stop updates', url: null },
        ],
      },
    ],
  },
  {
    name: 'hello_world',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Hello World', buttons: [] },
      {
        type: 'BODY',
        format: null,
        text: 'Welcome and congratulations!! This message demonstrates your ability to send a message.',
        buttons: [],
      },
    ],
  },
];

/** Each placeholder {{n}} of a text replaced by its parameter, the n-th given. */
function fill(text: string, parameters: readonly string[]): string {
  return text.replace(/\{\{\s*(\d+)\s*\}\}/g, (whole, index: string) => parameters[Number(index) - 1] ?? whole);
}

/**
 * The text a recipient reads for a template send, once the send is found to name an approved
 * template of the catalogue and to fill it exactly (what the Cloud API engine checks before Meta
 * is asked): the header, body and footer, each filled, a line apart. A media header is the
 * message's file, which travels with it.
 */
export function renderTemplateSend(templates: readonly MessageTemplate[], send: TemplateSend, headerMedia?: MediaKind): string {
  const template = findApprovedTemplate(templates, send);
  assertTemplateParameters(template, send, headerMedia);
  const parts: string[] = [];
  for (const component of template.components) {
    const type = component.type.toUpperCase();
    if (component.text === null || (component.format !== null && component.format.toUpperCase() !== 'TEXT')) continue;
    if (type === 'HEADER') parts.push(fill(component.text, send.headerParameters));
    else if (type === 'BODY') parts.push(fill(component.text, send.bodyParameters));
    else if (type === 'FOOTER') parts.push(component.text);
  }
  return parts.join('\n');
}

/** A rehearsal template as an account describes it (POST /sandbox/templates). */
export interface RehearsalTemplateInput {
  name: string;
  language: string;
  category: string;
  status: string;
  header?: string;
  body: string;
  footer?: string;
}

/**
 * The template an account adds to its sandbox number, in Meta's shape. Its placeholders must run
 * {{1}}, {{2}}, … without a gap, as Meta requires before it reviews a template, so that a send
 * rehearsed against it would also fit the one Meta approves.
 */
export function rehearsalTemplate(input: RehearsalTemplateInput): MessageTemplate {
  for (const [field, text] of [
    ['header', input.header],
    ['body', input.body],
  ] as const) {
    const numbers = [...(text ?? '').matchAll(/\{\{\s*(\d+)\s*\}\}/g)].map((match) => Number(match[1]));
    const highest = Math.max(0, ...numbers);
    const missing = Array.from({ length: highest }, (_, index) => index + 1).find((number) => !numbers.includes(number));
    if (missing !== undefined)
      throw new AppError(
        'invalid_request',
        `${field} uses {{${highest}}} but not {{${missing}}}: Meta numbers placeholders from {{1}} without a gap.`,
        {
          field,
        },
      );
  }
  const component = (type: string, text: string, format: string | null = null) => ({ type, format, text, buttons: [] });
  return {
    name: input.name,
    language: input.language,
    status: input.status,
    category: input.category,
    components: [
      ...(input.header === undefined ? [] : [component('HEADER', input.header, 'TEXT')]),
      component('BODY', input.body),
      ...(input.footer === undefined ? [] : [component('FOOTER', input.footer)]),
    ],
  };
}
