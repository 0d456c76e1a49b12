import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { accountOf, pageContext, requireAccountMember, requireSignedIn, sendPage } from '../context.ts';
import { presentOverview } from '../presenters/overview.ts';
import { OverviewPage } from '../views/overview-page.tsx';

/** `/`: the account's overview, or the sign-in page for a visitor. */
export function registerOverviewRoutes(app: FastifyInstance, gateway: Gateway): void {
  app.get('/', { preHandler: [requireSignedIn, requireAccountMember] }, async (request, reply) => {
    const account = accountOf(request);
    const view = await presentOverview(gateway, account);
    return sendPage(reply, OverviewPage({ context: pageContext(request, reply, 'Overview', 'overview'), view }));
  });
}
