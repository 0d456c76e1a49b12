import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { operatorScopeOf, pageContext, sendPage } from '../context.ts';
import { queryText } from '../forms.ts';
import { presentOperatorAudit } from '../presenters/operator-audit.ts';
import { OperatorAuditPage } from '../views/operator-audit-page.tsx';

/** `/operator/audit`: the audit log of management actions, for every account or one (`?account=`). */
export function registerOperatorAuditRoutes(app: FastifyInstance, gateway: Gateway): void {
  app.get('/operator/audit', async (request, reply) => {
    const view = await presentOperatorAudit(gateway, operatorScopeOf(request), queryText(request.query, 'account'));
    return sendPage(reply, OperatorAuditPage({ context: pageContext(request, reply, 'Audit log', 'operator'), view }));
  });
}
