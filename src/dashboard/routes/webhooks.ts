import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import { chatwootEventTypes, isAmqpUrl, type RabbitmqTarget } from '../../domain/webhooks.ts';
import type { ChatwootInboxInput } from '../../webhooks/chatwoot-destination.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, canManage, pageContext, requireAccountMember, requireManager, sendPage, userActor, viewerOf } from '../context.ts';
import { attempt, formErrorText, formList, formText } from '../forms.ts';
import { redirectWithNotice, type NoticeCode } from '../notices.ts';
import {
  eventTypeOptions,
  newWebhookForm,
  presentWebhookDetail,
  presentWebhookForm,
  presentWebhookList,
  type WebhookFormView,
} from '../presenters/webhooks.ts';
import { WebhookDetailPage, type ShownSecret } from '../views/webhook-detail-page.tsx';
import { WebhookFormPage } from '../views/webhook-form-page.tsx';
import { WebhookListPage } from '../views/webhook-list-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'webhooks'>;

type WebhookRequest = FastifyRequest<{ Params: { id: string } }>;
type DeliveryRequest = FastifyRequest<{ Params: { id: string; deliveryId: string } }>;

/**
 * `/webhooks`: members see the webhooks and their delivery logs; owners and admins create,
 * change and test them and see their secrets. Every lookup is scoped to the viewer's account,
 * so another account's webhook or delivery id is simply not found.
 */
export function registerWebhookRoutes(app: FastifyInstance, gateway: Services): void {
  const member = { preHandler: requireAccountMember };
  const manager = { preHandler: requireManager };

  app.get('/webhooks', member, async (request, reply) => {
    const view = await presentWebhookList(gateway, accountOf(request), canManage(viewerOf(request)));
    return sendPage(reply, WebhookListPage({ context: pageContext(request, reply, 'Webhooks', 'webhooks'), view }));
  });

  app.get('/webhooks/new', manager, (request, reply) => renderForm(request, reply, newWebhookForm()));

  app.post('/webhooks', manager, async (request, reply) => {
    const { input, typed } = webhookInput(request.body, false);
    const result = await attempt(() => gateway.webhooks.createWebhook(accountOf(request).scope, input, userActor(request)));
    if (!result.ok)
      return renderForm(
        request,
        reply,
        { ...newWebhookForm(), ...typed, error: formErrorText(result.error) },
        httpStatusFor(result.error.code),
      );
    return redirectWithNotice(reply, `/webhooks/${encodeURIComponent(result.value.webhook.id)}`, 'webhook_created');
  });

  app.get('/webhooks/:id', member, (request: WebhookRequest, reply) => renderDetail(request, reply));

  app.get('/webhooks/:id/edit', manager, async (request: WebhookRequest, reply) =>
    renderForm(request, reply, await presentWebhookForm(gateway, accountOf(request), request.params.id)),
  );

  app.post('/webhooks/:id', manager, async (request: WebhookRequest, reply) => {
    const { id } = request.params;
    const { input, typed } = webhookInput(request.body, formText(request.body, 'chatwoot_token_stored') === 'yes');
    const result = await attempt(() => gateway.webhooks.updateWebhook(accountOf(request).scope, id, input, userActor(request)));
    if (!result.ok) {
      // A webhook that is not there (any more, or not in this account) is a 404 page, not a form error.
      if (result.error.code === 'webhook_not_found') throw result.error;
      const form: WebhookFormView = { webhookId: id, ...typed, error: formErrorText(result.error), options: eventTypeOptions };
      return renderForm(request, reply, form, httpStatusFor(result.error.code));
    }
    return redirectToWebhook(reply, id, 'webhook_updated');
  });

  app.post('/webhooks/:id/enable', manager, async (request: WebhookRequest, reply) => {
    await gateway.webhooks.updateWebhook(accountOf(request).scope, request.params.id, { enabled: true }, userActor(request));
    return redirectToWebhook(reply, request.params.id, 'webhook_enabled');
  });

  app.post('/webhooks/:id/disable', manager, async (request: WebhookRequest, reply) => {
    await gateway.webhooks.updateWebhook(accountOf(request).scope, request.params.id, { enabled: false }, userActor(request));
    return redirectToWebhook(reply, request.params.id, 'webhook_disabled');
  });

  app.post('/webhooks/:id/delete', manager, async (request: WebhookRequest, reply) => {
    await gateway.webhooks.deleteWebhook(accountOf(request).scope, request.params.id, userActor(request));
    return redirectWithNotice(reply, '/webhooks', 'webhook_deleted');
  });

  app.post('/webhooks/:id/test', manager, async (request: WebhookRequest, reply) => {
    await gateway.webhooks.sendTestEvent(accountOf(request).scope, request.params.id, userActor(request));
    return redirectToWebhook(reply, request.params.id, 'test_event_sent');
  });

  // Revealing and rotating answer the POST with the page itself: the secret is in this one
  // no-store response only, and a POST carries the CSRF token that a GET link could not.
  app.post('/webhooks/:id/secret', manager, async (request: WebhookRequest, reply) => {
    const value = await gateway.webhooks.revealSecret(accountOf(request).scope, request.params.id, userActor(request));
    return renderDetail(request, reply, { kind: 'revealed', value });
  });

  app.post('/webhooks/:id/rotate-secret', manager, async (request: WebhookRequest, reply) => {
    const rotated = await gateway.webhooks.rotateSecret(accountOf(request).scope, request.params.id, userActor(request));
    return renderDetail(request, reply, { kind: 'rotated', value: rotated.secret, previousValidUntil: rotated.previousValidUntil });
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', manager, async (request: DeliveryRequest, reply) => {
    const { id, deliveryId } = request.params;
    // The URL names the webhook too; the service refuses a delivery of another webhook through it.
    await gateway.webhooks.redeliver(accountOf(request).scope, deliveryId, id, userActor(request));
    return redirectToWebhook(reply, id, 'redelivery_scheduled');
  });

  async function renderDetail(request: WebhookRequest, reply: FastifyReply, secret?: ShownSecret): Promise<FastifyReply> {
    const origin = `${request.protocol}://${request.host}`;
    const view = await presentWebhookDetail(gateway, accountOf(request), request.params.id, canManage(viewerOf(request)), origin);
    return sendPage(reply, WebhookDetailPage({ context: pageContext(request, reply, 'Webhook', 'webhooks'), view, secret }));
  }

  function renderForm(request: FastifyRequest, reply: FastifyReply, view: WebhookFormView, status = 200): Promise<FastifyReply> {
    const title = view.webhookId === null ? 'New webhook' : 'Edit webhook';
    return sendPage(reply, WebhookFormPage({ context: pageContext(request, reply, title, 'webhooks'), view }), status);
  }
}

/** The form's fields as typed, to show them again beside a refusal (never the Chatwoot token). */
type TypedWebhookForm = Pick<
  WebhookFormView,
  | 'url'
  | 'eventTypes'
  | 'messageScope'
  | 'rabbitmqExchange'
  | 'rabbitmqRoutingKey'
  | 'stream'
  | 'chatwootAccountId'
  | 'chatwootInboxId'
  | 'chatwootNumber'
  | 'chatwootTokenStored'
>;

/**
 * A Chatwoot inbox's fields, when its ids are filled in (ADR 0067): the URL is then Chatwoot's base
 * URL, the inbox takes its own events whatever boxes are ticked, and a blank token keeps the stored
 * one. Ids that are not numbers go on as such, for the service to refuse with its own message.
 */
function chatwootInput(typed: TypedWebhookForm, token: string): ChatwootInboxInput | undefined {
  if (typed.chatwootAccountId === '' && typed.chatwootInboxId === '') return undefined;
  return {
    accountId: Number(typed.chatwootAccountId),
    inboxId: Number(typed.chatwootInboxId),
    number: typed.chatwootNumber === '' ? null : typed.chatwootNumber,
    ...(token !== '' && { apiAccessToken: token }),
  };
}

/**
 * The form's fields as the service takes them; no checkbox ticked is an empty list, which it
 * refuses. The exchange and routing key go with an amqp(s):// URL only, where the service needs
 * them; beside an http(s) URL the service refuses them, so filled-in fields there are passed on
 * to be refused rather than silently dropped. An event stream (the box ticked, or a stream being
 * edited) takes no URL: one typed beside it is passed on to be refused the same way.
 */
function webhookInput(
  body: unknown,
  chatwootTokenStored: boolean,
): {
  input: {
    url?: string;
    eventTypes: string[];
    messageScope: string;
    rabbitmq?: RabbitmqTarget;
    stream?: boolean;
    chatwoot?: ChatwootInboxInput;
  };
  typed: TypedWebhookForm;
} {
  const typed: TypedWebhookForm = {
    url: formText(body, 'url').trim(),
    eventTypes: formList(body, 'event_types'),
    messageScope: formText(body, 'message_scope') || 'direct',
    rabbitmqExchange: formText(body, 'rabbitmq_exchange').trim(),
    rabbitmqRoutingKey: formText(body, 'rabbitmq_routing_key').trim(),
    stream: formText(body, 'stream') === 'on',
    chatwootAccountId: formText(body, 'chatwoot_account_id').trim(),
    chatwootInboxId: formText(body, 'chatwoot_inbox_id').trim(),
    chatwootNumber: formText(body, 'chatwoot_number').trim(),
    chatwootTokenStored,
  };
  const { rabbitmqExchange: exchange, rabbitmqRoutingKey: routingKey, stream, url, eventTypes, messageScope } = typed;
  const sink = isAmqpUrl(url) || exchange !== '' || routingKey !== '';
  const destination = stream ? { stream: true, ...(url !== '' && { url }) } : { url };
  const chatwoot = chatwootInput(typed, formText(body, 'chatwoot_api_access_token').trim());
  return {
    input: {
      eventTypes: chatwoot === undefined ? eventTypes : [...chatwootEventTypes],
      messageScope,
      ...destination,
      ...(sink && { rabbitmq: { exchange, routingKey } }),
      ...(chatwoot !== undefined && { chatwoot }),
    },
    typed,
  };
}

function redirectToWebhook(reply: FastifyReply, id: string, notice: NoticeCode): FastifyReply {
  return redirectWithNotice(reply, `/webhooks/${encodeURIComponent(id)}`, notice);
}
