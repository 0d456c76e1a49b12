import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { AppError, httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, canManage, pageContext, requireAccountMember, requireManager, sendPage, userActor, viewerOf } from '../context.ts';
import { CALL_REPLY_TEXT_MAX_LENGTH } from '../../domain/calls.ts';
import { isPresetName, PRESET_NAMES, type PolicySetting } from '../../domain/send-policy.ts';
import { attempt, formErrorText, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { readFieldsBeforeFile, readLeadingCsrfToken, stopReadingUnfinishedForm } from '../streamed-form.ts';
import { presentNumbers, presentNumberStatuses } from '../presenters/numbers.ts';
import { NumbersPage } from '../views/numbers-page.tsx';
import { namedScope } from '../../web/named-scope.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<
  GatewayServices,
  'accounts' | 'groups' | 'history' | 'media' | 'numbers' | 'pauses' | 'numberControl' | 'sandboxInbox' | 'sendQueues'
>;

/** The simulate form's largest file: WhatsApp's limit for photos, video and sound. */
const SIMULATED_FILE_LIMIT_BYTES = 16 * 1024 * 1024;

/** `/numbers`: the account's numbers, their live status, their sending (policy, queue, chart), and the sandbox's incoming-message form. */
export function registerNumbersRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/numbers', { preHandler: requireAccountMember }, async (request, reply) => {
    const view = await presentNumbers(gateway, accountOf(request), canManage(viewerOf(request)));
    return sendPage(reply, NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }));
  });

  // The number's owner ends the pause (forwarded there when it runs on another node).
  app.post<{ Params: { id: string } }>('/numbers/:id/resume', { preHandler: requireManager }, async (request, reply) => {
    const number = await gateway.numbers.findNumber(accountOf(request).scope, request.params.id);
    await gateway.numberControl.resume({ scope: accountOf(request).scope, actor: userActor(request) }, number);
    return redirectWithNotice(reply, '/numbers', 'number_resumed');
  });

  // The send policy of a number, and the account's default, as the API sets them; owners and admins only.
  app.post<{ Params: { id: string } }>('/numbers/:id/send_policy', { preHandler: requireManager }, async (request, reply) => {
    const number = await gateway.numbers.findNumber(accountOf(request).scope, request.params.id);
    const setting = chosenSetting(request.body);
    if (setting !== undefined) await gateway.sendQueues.setNumberPolicy(number, setting, userActor(request));
    return redirectWithNotice(reply, '/numbers', 'send_policy_saved');
  });
  app.post('/numbers/default_send_policy', { preHandler: requireManager }, async (request, reply) => {
    const setting = chosenSetting(request.body);
    if (setting !== undefined) await gateway.sendQueues.setAccountPolicy(accountOf(request).id, setting, userActor(request));
    return redirectWithNotice(reply, '/numbers', 'send_policy_saved');
  });

  // Clearing cancels on the number's owner (forwarded there when it runs on another node).
  app.post<{ Params: { id: string } }>('/numbers/:id/clear_queue', { preHandler: requireManager }, async (request, reply) => {
    const number = await gateway.numbers.findNumber(accountOf(request).scope, request.params.id);
    await gateway.numberControl.clearQueue({ scope: accountOf(request).scope, actor: userActor(request) }, number);
    return redirectWithNotice(reply, '/numbers', 'queue_cleared');
  });

  // A number's call settings, as PATCH /numbers/{id} sets them; owners and admins only.
  app.post<{ Params: { id: string } }>('/numbers/:id/calls', { preHandler: requireManager }, async (request, reply) => {
    const replyText = formText(request.body, 'call_reply_text').trim();
    if (replyText.length > CALL_REPLY_TEXT_MAX_LENGTH) {
      throw new AppError('invalid_argument', `The reply to callers takes at most ${CALL_REPLY_TEXT_MAX_LENGTH} characters.`, {
        field: 'call_reply_text',
        limit: CALL_REPLY_TEXT_MAX_LENGTH,
      });
    }
    await gateway.numbers.updateSettings(
      accountOf(request).scope,
      request.params.id,
      {
        rejectCalls: formText(request.body, 'reject_calls') === 'on',
        callReplyText: replyText === '' ? null : replyText,
      },
      userActor(request),
    );
    return redirectWithNotice(reply, '/numbers', 'call_settings_saved');
  });

  // Polled by open pages: it must not count as activity, or an open tab would never go idle.
  app.get('/numbers/status.json', { preHandler: requireAccountMember, config: { passiveSession: true } }, async (request, reply) => {
    const view = await presentNumberStatuses(gateway, accountOf(request));
    return reply.header('cache-control', 'no-store').send(view);
  });

  // Members may simulate too: it only produces test traffic on the account's own sandbox numbers.
  // The form may carry a file, so it is multipart, parsed in a scope of its own that nothing
  // else shares. Membership is checked before the body is read, the CSRF token (the form's first
  // field) before the other fields, and the rate and the number's owner before the file: only a
  // post that will be acted on makes the gateway hold a file, and only up to the form's limit.
  void app.register(
    namedScope('sandbox message form', async (scope) => {
      await scope.register(multipart, {
        throwFileSizeLimit: false,
        limits: { fileSize: SIMULATED_FILE_LIMIT_BYTES, files: 1, fields: 8, fieldSize: 256 * 1024 },
      });
      scope.addHook('onSend', stopReadingUnfinishedForm);
      scope.post<{ Params: { id: string } }>(
        '/numbers/:id/simulate',
        { onRequest: requireAccountMember as onRequestAsyncHookHandler, preValidation: readLeadingCsrfToken },
        async (request, reply) => {
          const account = accountOf(request);
          const { fields, file } = await readFieldsBeforeFile(request);
          const fromPhone = formText(fields, 'from_phone');
          const message = formText(fields, 'message');
          const result = await attempt(() =>
            gateway.sandboxInbox.receiveOnNumber(
              account.scope,
              request.params.id,
              fromPhone,
              message,
              file === undefined ? undefined : () => describeFile(gateway, file),
            ),
          );
          if (!result.ok) {
            // Another account's number (or none) is a 404 page, whatever was typed, not a form error.
            if (result.error.code === 'number_not_found') throw result.error;
            const draft = { numberId: request.params.id, fromPhone, message, error: describeInputError(result.error) };
            const view = await presentNumbers(gateway, account, canManage(viewerOf(request)), draft);
            return sendPage(
              reply,
              NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }),
              httpStatusFor(result.error.code),
            );
          }
          return redirectWithNotice(reply, '/numbers', 'incoming_simulated');
        },
      );
    }),
  );
}

/** Reads the form's file, held in memory up to the form's limit, and describes it as an engine sends it. */
async function describeFile(gateway: Services, part: MultipartFile) {
  const bytes = await part.toBuffer();
  if (part.file.truncated) {
    throw new AppError(
      'media_too_large',
      `The form takes files up to ${SIMULATED_FILE_LIMIT_BYTES / 1024 / 1024} MiB; simulate larger ones with POST /sandbox/receive and ` +
        `an upload.`,
      {
        limit_bytes: SIMULATED_FILE_LIMIT_BYTES,
      },
    );
  }
  return gateway.media.describe(bytes, { fileName: part.filename || null, fallbackMimeType: part.mimetype });
}

/**
 * The setting the policy form chose: a preset, null to inherit, or undefined for "custom", which
 * keeps a policy of the number's own figures (the form cannot edit figures; the API can).
 */
function chosenSetting(body: unknown): PolicySetting | null | undefined {
  const chosen = formText(body, 'send_policy');
  if (chosen === 'inherit') return null;
  if (chosen === 'custom') return undefined;
  if (!isPresetName(chosen))
    throw new AppError('invalid_send_policy', `Choose inherit or one of the presets: ${PRESET_NAMES.join(', ')}.`, {
      field: 'send_policy',
    });
  return { preset: chosen };
}

function describeInputError(error: AppError): string {
  // The length limit is in the meta; without it "too long" gives nothing to aim for.
  return error.code === 'message_too_long' ? formErrorText(error) : error.message;
}
