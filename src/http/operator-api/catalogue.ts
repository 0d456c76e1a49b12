import { accountOperations } from './accounts.ts';
import { apiKeyOperations } from './api-keys.ts';
import { auditOperations } from './audit-events.ts';
import { numberOperations } from './numbers.ts';
import { numberSessionOperations } from './number-session.ts';
import { numberProxyOperations } from './number-proxy.ts';
import { numberCloudOperations } from './number-cloud.ts';
import { numberSendsOperations } from './number-sends.ts';
import { userOperations } from './users.ts';

/** The operator API (docs/operator-api.md), in the document's order. */
export const operatorOperations = [
  ...accountOperations,
  ...userOperations,
  ...apiKeyOperations,
  ...numberOperations,
  ...numberSessionOperations,
  ...numberSendsOperations,
  ...numberProxyOperations,
  ...numberCloudOperations,
  ...auditOperations,
];
