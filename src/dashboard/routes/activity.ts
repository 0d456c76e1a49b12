import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, pageContext, requireAccountMember, sendPage } from '../context.ts';
import { presentActivity } from '../presenters/activity.ts';
import { ActivityPage } from '../views/activity-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'activity'>;

/** `/activity`: the account's messages and webhook deliveries of the last 30 days, charted (ADR 0073). */
export function registerActivityRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/activity', { preHandler: requireAccountMember }, async (request, reply) => {
    const view = await presentActivity(gateway, accountOf(request));
    return sendPage(reply, ActivityPage({ context: pageContext(request, reply, 'Activity', 'activity'), view }));
  });
}
