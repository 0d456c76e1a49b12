import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { closeAfterLinger } from '../web/linger.ts';
import type { FormBody } from './forms.ts';

/**
 * A multipart form read in the order a browser sends it: the CSRF token (the first field, as
 * PostForm writes it), the other fields, and the file last. The file is left unread until the
 * action asks for it, so a post that is refused (a forged token, a number not the viewer's, a
 * rate spent) costs the gateway its small fields and nothing more, however large the file.
 */
interface StreamedForm {
  parts: AsyncIterator<Multipart>;
  /** A part read to look for the token that turned out to be something else. */
  unclaimed: Multipart | undefined;
}

const forms = new WeakMap<FastifyRequest, StreamedForm>();

/**
 * A preValidation hook: reads the form's first part and, when it is the `_csrf` field, makes it
 * the body the dashboard's CSRF check reads. Anything else first leaves no token, so the post is
 * refused before any file is read.
 */
export async function readLeadingCsrfToken(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  const form: StreamedForm = { parts: request.parts(), unclaimed: undefined };
  forms.set(request, form);
  const first = await form.parts.next();
  if (first.done === true) {
    request.body = {};
  } else if (first.value.type === 'field' && first.value.fieldname === '_csrf') {
    request.body = { _csrf: String(first.value.value) };
  } else {
    request.body = {};
    form.unclaimed = first.value;
  }
}

/**
 * The fields up to the file, and the file's part, unread; a urlencoded post is its body. A part
 * with no file name is the empty one a browser sends when no file was chosen.
 */
export async function readFieldsBeforeFile(request: FastifyRequest): Promise<{ fields: FormBody; file: MultipartFile | undefined }> {
  const form = forms.get(request);
  if (form === undefined) return { fields: (request.body ?? {}) as FormBody, file: undefined };
  const fields: FormBody = {};
  for (let part = await nextPart(form); part !== undefined; part = await nextPart(form)) {
    if (part.type === 'file') return { fields, file: part.filename === '' ? undefined : part };
    if (fields[part.fieldname] === undefined) fields[part.fieldname] = String(part.value);
  }
  return { fields, file: undefined };
}

async function nextPart(form: StreamedForm): Promise<Multipart | undefined> {
  if (form.unclaimed !== undefined) {
    const part = form.unclaimed;
    form.unclaimed = undefined;
    return part;
  }
  const next = await form.parts.next();
  return next.done === true ? undefined : next.value;
}

/**
 * An onSend hook: when the answer goes out before the form was read to its end (a refusal, or a
 * file never asked for), the parser lets go of the request and the rest is discarded within the
 * lingering close's bounds, so the client still reads the answer and nothing is held.
 */
export async function stopReadingUnfinishedForm(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!forms.has(request) || request.raw.readableEnded) return;
  request.raw.unpipe();
  void reply.header('connection', 'close');
  closeAfterLinger(request.raw, reply.raw);
  request.raw.resume();
}
