import { AppError } from './errors.ts';
import type { InteractiveReply, StructuredContent } from './structured-content.ts';

/**
 * A rehearsed tap (POST /sandbox/receive with interactive_reply) must be one a person could make
 * on the message it answers: a reply button or a list row of our interactive message, by its id
 * and title, or a quick-reply button of our template, by the payload its send gave. Anything else
 * would rehearse a tap that WhatsApp never delivers.
 */
export function assertTapAnswers(answered: StructuredContent | null, reply: InteractiveReply): void {
  const choices = choicesOf(answered, reply.kind);
  if (choices === undefined)
    refuse(
      'reply_to',
      `reply_to must name one of your ${reply.kind === 'quick_reply' ? 'template' : 'interactive'} messages with ${kindWords(reply.kind)}.`,
    );
  const tapped = choices.find((choice) => choice.id === reply.id);
  if (tapped === undefined)
    refuse(
      'interactive_reply.id',
      `The message answered has no ${kindWords(reply.kind)} with the id ${reply.id} (it has ${choices.map((each) => each.id).join(', ')}).`,
    );
  if (tapped.title !== undefined && tapped.title !== reply.title)
    refuse('interactive_reply.title', `The ${kindWords(reply.kind)} ${reply.id} reads "${tapped.title}", not "${reply.title}".`);
}

/** The ids (and titles, where the message keeps them) a tap of this kind may answer; undefined when the message has none. */
function choicesOf(answered: StructuredContent | null, kind: InteractiveReply['kind']): { id: string; title?: string }[] | undefined {
  if (answered === null) return undefined;
  if (kind === 'quick_reply') {
    if (!('template' in answered)) return undefined;
    const payloads = (answered.template.buttonParameters ?? []).filter((each) => each.type === 'quick_reply');
    return payloads.length === 0 ? undefined : payloads.map((each) => ({ id: each.value }));
  }
  if (!('interactive' in answered)) return undefined;
  const interactive = answered.interactive;
  if (kind === 'button' && interactive.kind === 'buttons') return interactive.buttons.map(({ id, title }) => ({ id, title }));
  if (kind === 'list' && interactive.kind === 'list')
    return interactive.sections.flatMap((section) => section.rows.map(({ id, title }) => ({ id, title })));
  return undefined;
}

function kindWords(kind: InteractiveReply['kind']): string {
  return kind === 'button' ? 'reply button' : kind === 'list' ? 'list row' : 'quick-reply button';
}

function refuse(field: string, message: string): never {
  throw new AppError('invalid_request', message, { field });
}
