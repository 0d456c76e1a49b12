import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, pageContext, requireAccountMember, requireSignedIn, sendPage } from '../context.ts';
import { presentOverview } from '../presenters/overview.ts';
import { OverviewPage } from '../views/overview-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'history' | 'numbers'>;

/** `/`: the account's overview, or the sign-in page for a visitor. */
export function registerOverviewRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/', { preHandler: [requireSignedIn, requireAccountMember] }, async (request, reply) => {
    const account = accountOf(request);
    const view = await presentOverview(gateway, account);
    return sendPage(reply, OverviewPage({ context: pageContext(request, reply, 'Overview', 'overview'), view }));
  });
}
