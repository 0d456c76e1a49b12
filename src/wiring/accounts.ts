import type { Config } from '../config.ts';
import { AuditLog } from '../audit/audit-log.ts';
import { AccountsService } from '../accounts/accounts-service.ts';
import { ApiKeyAuthenticator } from '../accounts/api-key-auth.ts';
import { ApiKeysService } from '../accounts/api-keys-service.ts';
import { OperatorTokensService } from '../accounts/operator-tokens-service.ts';
import { NumbersService } from '../accounts/numbers-service.ts';
import { CloudNumbersService } from '../accounts/cloud-numbers-service.ts';
import { SignInService } from '../accounts/sign-in-service.ts';
import { TeamService } from '../accounts/team-service.ts';
import type { Logger } from 'pino';
import type { GatewayKeys } from './keys.ts';
import type { GatewayBoundaries, SessionParts } from './sessions.ts';
import { PasswordHasher } from '../accounts/passwords.ts';
import type { StorageParts } from './storage.ts';

export interface AccountParts {
  accounts: AccountsService;
  numbers: NumbersService;
  /** Cloud API numbers' settings: Meta's ids, the token and secrets sealed (docs/cloud-api.md). */
  cloudNumbers: CloudNumbersService;
  apiKeys: ApiKeysService;
  authenticator: ApiKeyAuthenticator;
  signIn: SignInService;
  team: TeamService;
  /** The audit log of management actions, as the operator reads it. */
  audit: AuditLog;
  /** The operator API's tokens: made, revoked and checked (docs/adr/0057-operator-api.md). */
  operatorTokens: OperatorTokensService;
}

/** Accounts, their users, numbers and API keys, and the dashboard's sign-in. */
export function buildAccounts(
  config: Config,
  storage: StorageParts,
  keys: GatewayKeys,
  sessions: SessionParts,
  logger: Logger,
  boundaries: GatewayBoundaries = {},
): AccountParts {
  const { store } = storage;
  const passwords = new PasswordHasher(boundaries.passwordCostLog2);
  const accounts = new AccountsService(store, passwords);
  const authenticator = new ApiKeyAuthenticator(store, logger);
  const { sessionIdleTimeoutMs: idleTimeoutMs, sessionAbsoluteTimeoutMs: absoluteTimeoutMs } = config.dashboard;
  const numbers = new NumbersService(store, sessions.supervisor, keys.secretBox);
  return {
    accounts,
    numbers,
    cloudNumbers: new CloudNumbersService(store, numbers, keys.secretBox),
    apiKeys: new ApiKeysService(store, config.apiKeyPrefix, (keyId) => authenticator.forget(keyId)),
    authenticator,
    signIn: new SignInService(store, { idleTimeoutMs, absoluteTimeoutMs }, keys.signInThrottleKey, passwords),
    team: new TeamService(store, accounts, passwords),
    audit: new AuditLog(store),
    operatorTokens: new OperatorTokensService(store, logger),
  };
}
