import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { requireOperator } from '../context.ts';
import { registerOperatorAccountRoutes } from './operator-accounts.ts';
import { registerOperatorNumberRoutes } from './operator-numbers.ts';
import { registerOperatorSystemRoutes } from './operator-system.ts';
import { registerOperatorAuditRoutes } from './operator-audit.ts';
import { registerOperatorClusterRoutes } from './operator-cluster.ts';
import { registerOperatorUserRoutes } from './operator-users.ts';
import { registerOperatorTokenRoutes } from './operator-tokens.ts';
import { namedScope } from '../../web/named-scope.ts';

/** What this module uses of the gateway's services (docs/adr/0061); the dashboard's plugin hands it these. */
export type OperatorConsoleServices = Pick<
  GatewayServices,
  | 'accounts'
  | 'apiKeys'
  | 'audit'
  | 'cloudNumbers'
  | 'config'
  | 'history'
  | 'keeper'
  | 'nodeClient'
  | 'numbers'
  | 'operatorTokens'
  | 'numberControl'
  | 'pauses'
  | 'scheduler'
  | 'sendQueues'
  | 'store'
  | 'supervisor'
  | 'system'
  | 'team'
>;

/**
 * `/operator/*`: the operator console. Its routes live in a child context whose one hook admits
 * operators only, so no route of the console can be added without that check.
 */
export function registerOperatorRoutes(app: FastifyInstance, gateway: OperatorConsoleServices): void {
  void app.register(
    namedScope('operator console', async (operator) => {
      operator.addHook('preHandler', requireOperator);
      operator.get('/operator', async (_request, reply) => reply.redirect('/operator/accounts', 303));
      registerOperatorAccountRoutes(operator, gateway);
      registerOperatorUserRoutes(operator, gateway);
      registerOperatorNumberRoutes(operator, gateway);
      registerOperatorClusterRoutes(operator, gateway);
      registerOperatorSystemRoutes(operator, gateway);
      registerOperatorAuditRoutes(operator, gateway);
      registerOperatorTokenRoutes(operator, gateway);
    }),
  );
}
