import multipart from '@fastify/multipart';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { AppError, httpStatusFor } from '../../domain/errors.ts';
import type { Gateway } from '../../main.ts';
import { accountOf, pageContext, requireAccountMember, sendPage } from '../context.ts';
import { attempt, formErrorText, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentNumbers, presentNumberStatuses } from '../presenters/numbers.ts';
import { NumbersPage } from '../views/numbers-page.tsx';

/** The simulate form's largest file: WhatsApp's limit for photos, video and sound. */
const SIMULATED_FILE_LIMIT_BYTES = 16 * 1024 * 1024;

/** `/numbers`: the account's numbers, their live status, and the sandbox's incoming-message form. */
export function registerNumbersRoutes(app: FastifyInstance, gateway: Gateway): void {
  app.get('/numbers', { preHandler: requireAccountMember }, async (request, reply) => {
    const view = await presentNumbers(gateway, accountOf(request));
    return sendPage(reply, NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }));
  });

  // Polled by open pages: it must not count as activity, or an open tab would never go idle.
  app.get('/numbers/status.json', { preHandler: requireAccountMember, config: { passiveSession: true } }, async (request, reply) => {
    const view = await presentNumberStatuses(gateway, accountOf(request));
    return reply.header('cache-control', 'no-store').send(view);
  });

  // Members may simulate too: it only produces test traffic on the account's own sandbox numbers.
  // The form may carry a file, so it is multipart, parsed in a scope of its own that nothing
  // else shares; its membership check runs before the body is read, so only a signed-in member
  // can make the gateway hold a file, and only up to the form's limit.
  void app.register(async (scope) => {
    await scope.register(multipart, {
      attachFieldsToBody: 'keyValues',
      throwFileSizeLimit: false,
      limits: { fileSize: SIMULATED_FILE_LIMIT_BYTES, files: 1, fields: 8, fieldSize: 256 * 1024 },
      onFile: async (part) => {
        const bytes = await part.toBuffer();
        const value: UploadedFile = { bytes, fileName: part.filename, mimeType: part.mimetype, truncated: part.file.truncated };
        (part as unknown as { value: UploadedFile }).value = value;
      },
    });
    scope.post<{ Params: { id: string } }>('/numbers/:id/simulate', { onRequest: requireAccountMember as onRequestAsyncHookHandler }, async (request, reply) => {
      const account = accountOf(request);
      const fromPhone = formText(request.body, 'from_phone');
      const message = formText(request.body, 'message');
      const file = uploadedFile(request.body);
      const result = await attempt(() =>
        gateway.sandboxInbox.receiveOnNumber(account.scope, request.params.id, fromPhone, message, file === undefined ? undefined : () => describeFile(gateway, file)),
      );
      if (!result.ok) {
        // Another account's number (or none) is a 404 page, whatever was typed, not a form error.
        if (result.error.code === 'number_not_found') throw result.error;
        const draft = { numberId: request.params.id, fromPhone, message, error: describeInputError(result.error) };
        const view = await presentNumbers(gateway, account, draft);
        return sendPage(reply, NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }), httpStatusFor(result.error.code));
      }
      return redirectWithNotice(reply, '/numbers', 'incoming_simulated');
    });
  });
}

/** A file from the simulate form, held in memory up to the form's limit. */
interface UploadedFile {
  bytes: Buffer;
  fileName: string;
  mimeType: string;
  truncated: boolean;
}

/** The form's file, or undefined when none was chosen (a browser then sends an empty part). */
function uploadedFile(body: unknown): UploadedFile | undefined {
  const value = (body as Record<string, unknown> | undefined)?.file;
  if (typeof value !== 'object' || value === null || !('bytes' in value)) return undefined;
  const file = value as UploadedFile;
  return file.bytes.length === 0 && file.fileName === '' ? undefined : file;
}

async function describeFile(gateway: Gateway, file: UploadedFile) {
  if (file.truncated) {
    throw new AppError('media_too_large', `The form takes files up to ${SIMULATED_FILE_LIMIT_BYTES / 1024 / 1024} MiB; simulate larger ones with POST /sandbox/receive and an upload.`, {
      limit_bytes: SIMULATED_FILE_LIMIT_BYTES,
    });
  }
  return gateway.media.describe(file.bytes, { fileName: file.fileName || null, fallbackMimeType: file.mimeType });
}

function describeInputError(error: AppError): string {
  // The length limit is in the meta; without it "too long" gives nothing to aim for.
  return error.code === 'message_too_long' ? formErrorText(error) : error.message;
}
