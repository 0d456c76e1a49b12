import { AppError } from './errors.ts';

/**
 * A template's buttons and the parameters a send gives them (docs/cloud-api.md#templates). Of
 * Meta's button types, two take something from a send: a URL button whose address ends in {{1}}
 * must be given that suffix, and a quick-reply button may be given the payload its tap brings
 * back (without one, Meta brings back the button's text). Every other button is sent as approved.
 */
export interface TemplateButton {
  /** QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, …, as Meta names them. */
  type: string;
  text: string | null;
  /** A URL button's address, with {{1}} where a send's suffix goes. */
  url: string | null;
}

/** What a send gives one button, by its position among the template's buttons. */
export interface TemplateButtonParameter {
  index: number;
  type: 'url' | 'quick_reply';
  value: string;
}

/** Which parameter a button takes from a send, if any, and whether it must be given. */
function buttonTakes(button: TemplateButton): { type: TemplateButtonParameter['type']; required: boolean } | undefined {
  const type = button.type.toUpperCase();
  if (type === 'QUICK_REPLY') return { type: 'quick_reply', required: false };
  if (type === 'URL' && /\{\{\s*1\s*\}\}/.test(button.url ?? '')) return { type: 'url', required: true };
  return undefined;
}

function refused(message: string, field: string): AppError {
  return new AppError('invalid_template_parameters', message, { field });
}

/**
 * Each parameter names a button of the template that takes one of its type, once; each URL
 * button with a suffix has its parameter. What Meta would refuse with 132000 or 131008 is
 * refused first, naming the parameter at fault.
 */
export function assertButtonParameters(
  template: { name: string; buttons: readonly TemplateButton[] },
  given: readonly TemplateButtonParameter[],
): void {
  const seen = new Set<number>();
  given.forEach((parameter, at) => {
    const field = `template.button_parameters[${at}]`;
    const button = template.buttons[parameter.index];
    if (button === undefined)
      throw refused(
        `${field}.index is ${parameter.index}; the template ${template.name} has ${template.buttons.length} button${template.buttons.length === 1 ? '' : 's'} (indexes from 0).`,
        `${field}.index`,
      );
    if (seen.has(parameter.index))
      throw refused(`${field} names button ${parameter.index} again; give each button once.`, `${field}.index`);
    seen.add(parameter.index);
    const takes = buttonTakes(button);
    if (takes === undefined)
      throw refused(`Button ${parameter.index} of ${template.name} (${button.type}) takes no parameter; it is sent as approved.`, field);
    if (takes.type !== parameter.type)
      throw refused(`Button ${parameter.index} of ${template.name} is a ${takes.type} button, not ${parameter.type}.`, `${field}.type`);
  });
  const missing = template.buttons.findIndex((button, index) => buttonTakes(button)?.required === true && !seen.has(index));
  if (missing >= 0)
    throw refused(
      `Button ${missing} of ${template.name} is a URL ending in {{1}}: give its suffix as {index: ${missing}, type: "url", value}.`,
      'template.button_parameters',
    );
}
