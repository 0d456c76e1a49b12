import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { operatorScopeOf, userActor } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import type { NumberParams } from './operator-numbers.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'numbers' | 'numberControl'>;

type NumberRequest = FastifyRequest<{ Params: NumberParams }>;
type RenderNumber = (request: NumberRequest, reply: FastifyReply, error?: AppError) => Promise<FastifyReply>;

/**
 * Setting and clearing a number's proxy from its console page (ADR 0063): stored sealed, with an
 * audit row naming the user; the session reconnects through it where that is safe. A refused URL
 * re-renders the page with the reason, and the field empty: the page never echoes a proxy URL.
 */
export function registerProxyRoutes(app: FastifyInstance, gateway: Services, renderNumber: RenderNumber): void {
  const change = async (request: NumberRequest, reply: FastifyReply, url: string | null) => {
    const scope = operatorScopeOf(request);
    const result = await attempt(() => gateway.numbers.setProxy(scope, request.params.numberId, url, userActor(request)));
    if (!result.ok) return renderNumber(request, reply, result.error);
    // Stored either way: a session that cannot be reached now reads it when it next connects.
    await gateway.numberControl.reconnect(scope, result.value).catch(() => false);
    return redirectWithNotice(
      reply,
      `/operator/numbers/${encodeURIComponent(result.value.id)}`,
      url === null ? 'proxy_cleared' : 'proxy_set',
    );
  };

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/proxy', (request, reply) =>
    change(request, reply, formText(request.body, 'url')),
  );
  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/proxy/clear', (request, reply) => change(request, reply, null));
}
