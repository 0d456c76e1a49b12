import type { FastifyInstance } from 'fastify';
import { AppError, errorCodes } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { errorResponseOf, errorResponses } from '../schemas.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'chatwootCallbacks' | 'chatReplies'>;

const callbackAnswer = {
  type: 'object',
  properties: {
    message_id: { type: 'string', description: 'The message the reply was sent as (msg_…).' },
    ignored: { type: 'string', description: 'Why nothing was sent: not an agent’s new reply, or one already sent.' },
    refused: { type: 'string', description: 'The error code the send was refused with; the reply shows as failed in Chatwoot.' },
  },
} as const;

/**
 * Chatwoot's callback for an inbox (ADR 0067): the URL set as the API inbox's webhook URL in
 * Chatwoot. An agent's reply is sent through the send operation itself, on the number's owner,
 * with the Chatwoot message id as its Idempotency-Key: the governor, the quota, the audit and a
 * repeat's single send all apply. It is no operation of the registry: Chatwoot calls it with no
 * key, the token in its path (never logged: request-context.ts masks `:token`) standing for one.
 */
export function registerChatwootCallbackRoutes(app: FastifyInstance, gateway: Services): void {
  for (const [url, operationId] of [
    ['/chatwoot/callbacks/:id/:token', 'chatwootCallback'],
    ['/api/chatwoot/callbacks/:id/:token', 'chatwootCallbackApi'],
  ] as const) {
    app.post<{ Params: { id: string; token: string }; Body: Record<string, unknown> }>(
      url,
      {
        // Chatwoot's endpoint, not a client's: its body is Chatwoot's to shape (open, unlike the
        // API's), so it stays out of the API document and the typed client; docs/integrations.md.
        schema: {
          hide: true,
          operationId,
          summary: "Chatwoot's callback for a Chatwoot inbox",
          description:
            'Set as the API channel inbox’s webhook URL in Chatwoot (the path comes with the inbox, on GET /webhooks/{id}). An agent’s new reply ' +
            '(message_created, outgoing, not private) of a conversation the inbox started is sent to the person from the inbox’s ' +
            'number through POST /send_message; everything else Chatwoot sends is ignored. The token is the inbox’s own, ' +
            'kept when its signing secret is rotated; a wrong one is 404. docs/integrations.md.',
          tags: ['webhooks'],
          params: {
            type: 'object',
            required: ['id', 'token'],
            properties: { id: { type: 'string', maxLength: 64 }, token: { type: 'string', maxLength: 128 } },
          },
          body: { type: 'object', description: "Chatwoot's webhook payload, as Chatwoot sends it." },
          response: { 200: callbackAnswer, ...errorResponses(400, 500), 404: errorResponseOf(['webhook_not_found']) },
        },
      },
      async (request) => {
        const callbacks = gateway.chatwootCallbacks;
        const { webhook, scope } = await callbacks.authenticate(request.params.id, request.params.token);
        const reply = await callbacks.replyOf(webhook, request.body);
        if ('ignored' in reply) return { ignored: reply.ignored };
        let sent: { message_id?: string; error?: string };
        let linked = false;
        try {
          const actor = { kind: 'system' as const, id: webhook.id, label: `Chatwoot inbox ${webhook.id}`, address: request.ip };
          const { messageId } = await gateway.chatReplies.send(scope, actor, {
            fromPhone: reply.fromPhone,
            to: { phone: reply.toPhone },
            text: reply.content,
            idempotencyKey: `chatwoot:${webhook.id}:${reply.chatwootMessageId}`,
            audited: { via: 'chatwoot', chatwoot_message_id: reply.chatwootMessageId, chatwoot_conversation_id: reply.conversationId },
            // Linked as soon as it is sent, before anything else may fail, so its ticks find it.
            onSent: async (messageId) => {
              linked = true;
              await callbacks.sent(reply, messageId);
            },
          });
          sent = { message_id: messageId };
        } catch (error) {
          // A refusal (the quota, a paused number's limits, an unknown recipient) is the reply's
          // outcome, shown in Chatwoot. A temporary one (a number reconnecting, the database away,
          // the same reply in flight) is not: it is answered as such, 503 with Retry-After or 409,
          // with nothing recorded, so Chatwoot's call again sends it. Anything else is ours, a 500,
          // and so is whatever failed once the reply was sent: it went, and is not shown failed.
          if (linked || !(error instanceof AppError) || isTemporary(error.code)) throw error;
          sent = { error: error.code };
        }
        if (typeof sent.message_id !== 'string') {
          await callbacks.refused(reply, sent.error ?? 'internal_error');
          return { refused: sent.error ?? 'internal_error' };
        }
        return { message_id: sent.message_id };
      },
    );
  }
}

/** A refusal that says "not now" rather than "no": the reply may still be sent when Chatwoot calls again. */
function isTemporary(code: string): boolean {
  return code === 'request_in_progress' || (errorCodes as Record<string, number | undefined>)[code] === 503;
}
