import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage, userActor } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { OperatorTokensPage, type OperatorTokensState } from '../views/operator-tokens-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'operatorTokens'>;

/**
 * `/operator/tokens`: the operator API's tokens (docs/operator-api.md). An operator makes one
 * with a name and sees its value once, in the answer to that POST only; revoking it refuses it
 * on every node from the commit on. Both actions write an audit row, as the CLI's do.
 */
export function registerOperatorTokenRoutes(app: FastifyInstance, gateway: Services): void {
  const render = async (request: FastifyRequest, reply: FastifyReply, state: OperatorTokensState, status = 200) => {
    const tokens = await gateway.operatorTokens.list();
    const context = pageContext(request, reply, 'Operator tokens', 'operator');
    return sendPage(reply, OperatorTokensPage({ context, tokens, state }), status);
  };

  app.get('/operator/tokens', async (request, reply) => render(request, reply, { name: '' }));

  app.post('/operator/tokens', async (request, reply) => {
    const name = formText(request.body, 'name');
    const result = await attempt(() => gateway.operatorTokens.create(name, userActor(request)));
    if (!result.ok) return render(request, reply, { name, error: result.error.message }, httpStatusFor(result.error.code));
    // Shown once, in this no-store response only; only its hash is kept.
    return render(request, reply, { name: '', created: { name: result.value.token.name, value: result.value.plaintext } }, 201);
  });

  app.post<{ Params: { tokenId: string } }>('/operator/tokens/:tokenId/revoke', async (request, reply) => {
    await gateway.operatorTokens.revoke(request.params.tokenId, userActor(request));
    return redirectWithNotice(reply, '/operator/tokens', 'operator_token_revoked');
  });
}
