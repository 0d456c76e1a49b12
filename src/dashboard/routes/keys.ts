import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, canManage, pageContext, requireAccountMember, requireManager, sendPage, userActor, viewerOf } from '../context.ts';
import { attempt, formList, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentKeys } from '../presenters/keys.ts';
import { EMPTY_KEY_FORM, KeysPage, type KeyFormState } from '../views/keys-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys'>;

/** `/keys`: the account's API keys; owners and admins create and revoke them. */
export function registerKeyRoutes(app: FastifyInstance, gateway: Services): void {
  async function renderKeys(request: FastifyRequest, reply: FastifyReply, form: KeyFormState, status = 200): Promise<FastifyReply> {
    const view = await presentKeys(gateway, accountOf(request), canManage(viewerOf(request)));
    return sendPage(reply, KeysPage({ context: pageContext(request, reply, 'API keys', 'keys'), view, form }), status);
  }

  app.get('/keys', { preHandler: requireAccountMember }, (request, reply) => renderKeys(request, reply, EMPTY_KEY_FORM));

  // The new key is rendered in the answer to this POST rather than after a redirect: it exists
  // only in this response (the page is no-store) and is never kept anywhere to show later.
  app.post('/keys', { preHandler: requireManager }, async (request, reply) => {
    const name = formText(request.body, 'name');
    // No box ticked is an empty list, which the service refuses: a key must be able to do something.
    const scopes = formList(request.body, 'scopes');
    const result = await attempt(() =>
      gateway.apiKeys.createKey({
        accountId: accountOf(request).id,
        name,
        scopes,
        createdByUserId: viewerOf(request).user.id,
        actor: userActor(request),
      }),
    );
    if (!result.ok)
      return renderKeys(request, reply, { name, scopes, error: result.error.message, newKey: undefined }, httpStatusFor(result.error.code));
    return renderKeys(request, reply, { ...EMPTY_KEY_FORM, newKey: result.value.plaintext }, 201);
  });

  app.post<{ Params: { id: string } }>('/keys/:id/revoke', { preHandler: requireManager }, async (request, reply) => {
    await gateway.apiKeys.revokeKey(accountOf(request).scope, request.params.id, userActor(request));
    return redirectWithNotice(reply, '/keys', 'key_revoked');
  });
}
