import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { notFound } from '../plugins/errors.ts';
import { ALIVE_PATH, NodeCallVerifier, TASKS_PATH } from '../../cluster/node-client.ts';
import { reported } from '../../observability/cluster-status.ts';
import type { DispatchedOperation } from '../operations/operation.ts';
import { DISPATCH_PATH, type ForwardedOperation, type OwnerDispatch } from '../operations/owner-dispatch.ts';
import { send } from '../operations/registry.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'clusterKey' | 'keeper' | 'scheduler'> & { dispatch: OwnerDispatch };

/**
 * The calls nodes make to each other (docs/cluster.md): any operation handed to the node that
 * serves its number, through the one dispatch route (the public API's, and the number-control
 * operations of the console, the CLI and the operator API: http/operations/number-control.ts),
 * the liveness probe and the task list. Each call must carry a valid signature by the cluster key
 * (derived from WAGW_SECRET_KEY); anything else is answered exactly as an unknown path is, a 404.
 * A signature names the node it is for, so a call made for one node is refused by every other.
 * These routes are not part of the public API document.
 */
export function registerInternalRoutes(app: FastifyInstance, gateway: Services, operations: readonly DispatchedOperation[]): void {
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

  // A forwarded operation carries the account of the key the first node authenticated (or, for a
  // number-control operation, the account of the number an operator or user acts on); the cluster
  // key's signature, checked above, is what vouches for it, so the scope is minted here.
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  app.post<{ Params: { operationId: string }; Body: ForwardedOperation }>(
    DISPATCH_PATH,
    { onRequest, preHandler, schema: hidden },
    async (request, reply) => {
      const operation = byId.get(request.params.operationId);
      if (operation === undefined) throw notFound(request);
      return send(reply, await gateway.dispatch.runForwarded(operation, request.body));
    },
  );
}
