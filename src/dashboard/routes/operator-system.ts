import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { pageContext, sendPage } from '../context.ts';
import { presentSystem } from '../presenters/operator.ts';
import { OperatorSystemPage } from '../views/operator-system-page.tsx';

/** `/operator/system`: version, uptime, database and row counts of this gateway. */
export function registerOperatorSystemRoutes(app: FastifyInstance, gateway: Gateway): void {
  app.get('/operator/system', async (request, reply) => {
    const view = await presentSystem(gateway);
    return sendPage(reply, OperatorSystemPage({ context: pageContext(request, reply, 'System', 'operator'), view }));
  });
}
