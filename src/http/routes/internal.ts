import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { notFound } from '../plugins/errors.ts';
import { ALIVE_PATH, NodeCallVerifier, TASKS_PATH } from '../../cluster/node-client.ts';
import { reported } from '../../observability/cluster-status.ts';
import type { LinkMethod } from '../../messaging/number-linking.ts';
import type { AnyOperation } from '../operations/operation.ts';
import { DISPATCH_PATH, type ForwardedOperation, type OwnerDispatch } from '../operations/owner-dispatch.ts';
import { send } from '../operations/registry.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<
  GatewayServices,
  'clusterKey' | 'keeper' | 'linking' | 'numbers' | 'pauses' | 'scheduler' | 'sendQueues' | 'supervisor'
>;

/**
 * The calls nodes make to each other (docs/cluster.md): any public operation handed to the node
 * that serves its number, through the one dispatch route, and the console's linking, restart,
 * pause and resume of a number and the clearing of its queue, served by its owner. Each call must carry a valid signature by the cluster key
 * (derived from WAGW_SECRET_KEY); anything else is answered exactly as an unknown path is, a 404.
 * A signature names the node it is for, so a call made for one node is refused by every other.
 * These routes are not part of the public API document.
 */
export function registerInternalRoutes(
  app: FastifyInstance,
  gateway: Services,
  operations: readonly AnyOperation[],
  dispatch: OwnerDispatch,
): void {
  const verifier = new NodeCallVerifier(gateway.clusterKey, gateway.keeper.nodeId);
  // The headers are judged before the body is read: a call not signed for this node is refused
  // from them alone, exactly as an unknown path is, and none of its body is read.
  const onRequest = async (request: FastifyRequest) => {
    if (!verifier.verifyHeaders(request.method, request.url, request.headers)) throw notFound(request);
  };
  const preHandler = async (request: FastifyRequest) => {
    const body = request.body === undefined ? '' : JSON.stringify(request.body);
    if (!verifier.bodyMatches(body, request.headers)) throw notFound(request);
  };
  const hidden = { hide: true };

  // The liveness probe of a node whose call is under way (cluster/owner-router.ts): it touches
  // nothing, so that only a node that cannot run at all fails it.
  app.get(ALIVE_PATH, { onRequest, preHandler, schema: hidden }, async () => ({ ok: true }));
  app.get(TASKS_PATH, { onRequest, preHandler, schema: hidden }, async () => ({ tasks: gateway.scheduler.list().map(reported) }));

  // A forwarded operation carries the account of the key the first node authenticated; the
  // cluster key's signature, checked above, is what vouches for it, so the scope is minted here.
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  app.post<{ Params: { operationId: string }; Body: ForwardedOperation }>(
    DISPATCH_PATH,
    { onRequest, preHandler, schema: hidden },
    async (request, reply) => {
      const operation = byId.get(request.params.operationId);
      if (operation === undefined) throw notFound(request);
      return send(reply, await dispatch.runForwarded(operation, request.body));
    },
  );

  const numberOf = (id: string) => gateway.numbers.findNumberForOwner(id);
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/restart', { onRequest, preHandler, schema: hidden }, async (request) => {
    await gateway.supervisor.restart(await numberOf(request.params.id));
    return { ok: true };
  });
  app.post<{ Params: { id: string }; Body: { detail?: string | null } }>(
    '/internal/numbers/:id/pause',
    { onRequest, preHandler, schema: hidden },
    async (request) => {
      await gateway.pauses.pause(await numberOf(request.params.id), typeof request.body?.detail === 'string' ? request.body.detail : null);
      return { ok: true };
    },
  );
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/logout', { onRequest, preHandler, schema: hidden }, async (request) => {
    await gateway.linking.logout(await numberOf(request.params.id));
    return { ok: true };
  });
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/resume', { onRequest, preHandler, schema: hidden }, async (request) => {
    await gateway.pauses.resume(await numberOf(request.params.id));
    return { ok: true };
  });
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/queue/clear', { onRequest, preHandler, schema: hidden }, async (request) => {
    return gateway.sendQueues.clear(await numberOf(request.params.id));
  });
  app.post<{ Params: { id: string }; Body: { method: LinkMethod; rehearsal?: boolean } }>(
    '/internal/numbers/:id/link',
    { onRequest, preHandler, schema: hidden },
    async (request) => {
      const method = request.body.method === 'pairing_code' ? 'pairing_code' : 'qr';
      return gateway.linking.start(await numberOf(request.params.id), method, request.body.rehearsal === true);
    },
  );
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/link/state', { onRequest, preHandler, schema: hidden }, async (request) => {
    return { attempt: gateway.linking.current(request.params.id) ?? null };
  });
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/link/cancel', { onRequest, preHandler, schema: hidden }, async (request) => {
    await gateway.linking.cancel(request.params.id);
    return { ok: true };
  });
}
