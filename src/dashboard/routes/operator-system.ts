import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage } from '../context.ts';
import { presentSystem } from '../presenters/operator.ts';
import { OperatorSystemPage } from '../views/operator-system-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'numbers' | 'numberControl' | 'supervisor' | 'system'>;

/** `/operator/system`: version, uptime, database and row counts of this gateway. */
export function registerOperatorSystemRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/operator/system', async (request, reply) => {
    const view = await presentSystem(gateway);
    return sendPage(reply, OperatorSystemPage({ context: pageContext(request, reply, 'System', 'operator'), view }));
  });
}
