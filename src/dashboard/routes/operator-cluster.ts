import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { readClusterStatus } from '../../operations/cluster-status.ts';
import { pageContext, sendPage } from '../context.ts';
import { OperatorClusterPage } from '../views/operator-cluster-page.tsx';

/** `/operator/cluster`: the nodes sharing the database, what each owns, and recent changes of owner. */
export function registerOperatorClusterRoutes(app: FastifyInstance, gateway: Gateway): void {
  app.get('/operator/cluster', async (request, reply) => {
    const status = await readClusterStatus(gateway.store, gateway.config.cluster.leaseTtlMs);
    const view = { ...status, thisNodeId: gateway.keeper.nodeId, leaseTtlMs: gateway.config.cluster.leaseTtlMs };
    return sendPage(reply, OperatorClusterPage({ context: pageContext(request, reply, 'Cluster', 'operator'), view }));
  });
}
