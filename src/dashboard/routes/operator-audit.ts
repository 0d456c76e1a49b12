import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { operatorScopeOf, pageContext, sendPage } from '../context.ts';
import { queryText } from '../forms.ts';
import { presentOperatorAudit } from '../presenters/operator-audit.ts';
import { OperatorAuditPage } from '../views/operator-audit-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'audit'>;

/** `/operator/audit`: the audit log of management actions, for every account or one (`?account=`). */
export function registerOperatorAuditRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/operator/audit', async (request, reply) => {
    const view = await presentOperatorAudit(gateway, operatorScopeOf(request), queryText(request.query, 'account') ?? null);
    return sendPage(reply, OperatorAuditPage({ context: pageContext(request, reply, 'Audit log', 'operator'), view }));
  });
}
