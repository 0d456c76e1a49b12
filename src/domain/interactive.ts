import { AppError } from './errors.ts';

/**
 * An interactive message of a Cloud API number (docs/cloud-api.md#interactive-messages): a body
 * with up to three reply buttons, a list of rows behind a button, or a call-to-action link. A
 * tap on a button or a row comes back as an incoming message whose text is its title.
 */
export type InteractiveMessage = {
  body: string;
  header: string | null;
  footer: string | null;
} & (
  | { kind: 'buttons'; buttons: InteractiveChoice[] }
  | { kind: 'list'; button: string; sections: { title: string | null; rows: (InteractiveChoice & { description: string | null })[] }[] }
  | { kind: 'cta_url'; displayText: string; url: string }
);

interface InteractiveChoice {
  id: string;
  title: string;
}

/** Meta's bounds, in characters (its interactive message reference). */
const LIMITS = {
  body: 1024,
  header: 60,
  footer: 60,
  buttonTitle: 20,
  id: 256,
  rowTitle: 24,
  rowDescription: 72,
  sectionTitle: 24,
} as const;
const MAX_BUTTONS = 3;
const MAX_ROWS = 10;

export interface InteractiveInput {
  body: string;
  header?: string;
  footer?: string;
  buttons?: { id: string; title: string }[];
  list?: { button: string; sections: { title?: string; rows: { id: string; title: string; description?: string }[] }[] };
  cta_url?: { display_text: string; url: string };
}

/** The interactive message a request describes, each bound of Meta's checked, naming the field at fault. */
export function parseInteractive(input: InteractiveInput): InteractiveMessage {
  const kinds = (['buttons', 'list', 'cta_url'] as const).filter((kind) => input[kind] !== undefined);
  if (kinds.length !== 1) refuse('interactive', 'interactive takes exactly one of buttons, list and cta_url.');
  within(input.body, LIMITS.body, 'interactive.body', 1);
  const common = {
    body: input.body,
    header: input.header === undefined ? null : within(input.header, LIMITS.header, 'interactive.header', 1),
    footer: input.footer === undefined ? null : within(input.footer, LIMITS.footer, 'interactive.footer', 1),
  };
  if (input.buttons !== undefined) {
    if (input.buttons.length < 1 || input.buttons.length > MAX_BUTTONS)
      refuse('interactive.buttons', `interactive.buttons holds 1 to ${MAX_BUTTONS} buttons.`);
    const buttons = input.buttons.map((button, index) => choice(button, `interactive.buttons[${index}]`, LIMITS.buttonTitle));
    assertUniqueIds(
      buttons.map((button) => button.id),
      'interactive.buttons',
    );
    return { ...common, kind: 'buttons', buttons };
  }
  if (input.list !== undefined) {
    const button = within(input.list.button, LIMITS.buttonTitle, 'interactive.list.button', 1);
    const sections = input.list.sections.map((section, index) => ({
      title:
        section.title === undefined ? null : within(section.title, LIMITS.sectionTitle, `interactive.list.sections[${index}].title`, 1),
      rows: section.rows.map((row, rowIndex) => {
        const field = `interactive.list.sections[${index}].rows[${rowIndex}]`;
        const description =
          row.description === undefined ? null : within(row.description, LIMITS.rowDescription, `${field}.description`, 1);
        return { ...choice(row, field, LIMITS.rowTitle), description };
      }),
    }));
    const rows = sections.flatMap((section) => section.rows);
    if (sections.length < 1 || rows.length < 1 || rows.length > MAX_ROWS || sections.some((section) => section.rows.length === 0))
      refuse('interactive.list.sections', `interactive.list holds 1 to ${MAX_ROWS} rows in all, and no empty section.`);
    assertUniqueIds(
      rows.map((row) => row.id),
      'interactive.list.sections',
    );
    return { ...common, kind: 'list', button, sections };
  }
  const cta = input.cta_url!;
  const url = URL.parse(cta.url);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    refuse('interactive.cta_url.url', 'interactive.cta_url.url must be an http(s) URL.');
  return {
    ...common,
    kind: 'cta_url',
    displayText: within(cta.display_text, LIMITS.buttonTitle, 'interactive.cta_url.display_text', 1),
    url: cta.url,
  };
}

function choice(raw: { id: string; title: string }, field: string, titleLimit: number): InteractiveChoice {
  return { id: within(raw.id, LIMITS.id, `${field}.id`, 1), title: within(raw.title, titleLimit, `${field}.title`, 1) };
}

function within(value: string, limit: number, field: string, least: number): string {
  const length = [...value].length;
  if (length < least || length > limit || value.trim() === '') refuse(field, `${field} must be 1 to ${limit} characters, not blank.`);
  return value;
}

function assertUniqueIds(ids: string[], field: string): void {
  if (new Set(ids).size !== ids.length) refuse(field, `${field} repeats an id; each button or row needs its own.`);
}

function refuse(field: string, message: string): never {
  throw new AppError('invalid_interactive', message, { field });
}
