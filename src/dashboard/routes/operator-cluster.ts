import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { readClusterStatus, readNodeTasks } from '../../observability/cluster-status.ts';
import { pageContext, sendPage } from '../context.ts';
import { OperatorClusterPage } from '../views/operator-cluster-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'config' | 'keeper' | 'nodeClient' | 'scheduler' | 'store'>;

/** `/operator/cluster`: the nodes sharing the database, what each owns, their periodic tasks, and recent changes of owner. */
export function registerOperatorClusterRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/operator/cluster', async (request, reply) => {
    const status = await readClusterStatus(gateway.store, gateway.config.cluster.leaseTtlMs);
    const tasks = await readNodeTasks(status.nodes, {
      thisNodeId: gateway.keeper.nodeId,
      scheduler: gateway.scheduler,
      nodeClient: gateway.nodeClient,
    });
    const view = { ...status, tasks, thisNodeId: gateway.keeper.nodeId, leaseTtlMs: gateway.config.cluster.leaseTtlMs };
    return sendPage(reply, OperatorClusterPage({ context: pageContext(request, reply, 'Cluster', 'operator'), view }));
  });
}
