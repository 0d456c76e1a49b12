import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { seedAccount } from '../../support/gateway.ts';
import { freePort } from '../server-process.ts';
import type { ListeningGateway } from '../listening-gateway.ts';

/**
 * What the typed client's every-operation program (clients/typescript/examples/every-operation.ts)
 * runs against: a fresh account with two numbers, a webhook to a receiver port the program opens,
 * a key with the `webhooks` scope and an operator token, as the environment the program reads.
 * One place, so that the program's source run and its packaged run never drift apart.
 */
export async function everyOperationSubject(live: ListeningGateway): Promise<{ env: Record<string, string>; accountId: string }> {
  const account = await seedAccount(live.gateway, { numbers: 2 });
  const receiverPort = await freePort();
  const { secret } = await live.gateway.webhooks.createWebhook(accountScope(account.accountId), {
    url: `http://127.0.0.1:${receiverPort}/`,
    eventTypes: ['message', 'number.paused', 'number.resumed'],
  });
  const operatorToken = (await live.gateway.operatorTokens.create('typed client')).plaintext;
  const hooksKey = (await live.gateway.apiKeys.createKey({ accountId: account.accountId, name: 'hooks', scopes: ['webhooks'] })).plaintext;
  const [from, other] = account.phones as [string, string];
  return {
    accountId: account.accountId,
    env: {
      PATH: process.env.PATH ?? '',
      WAGW_URL: `http://127.0.0.1:${live.port}`,
      WAGW_API_KEY: account.apiKey,
      WAGW_FROM: from,
      WAGW_OTHER: other,
      WAGW_WEBHOOK_SECRET: secret,
      WAGW_RECEIVER_PORT: String(receiverPort),
      WAGW_WEBHOOKS_API_KEY: hooksKey,
      WAGW_OPERATOR_TOKEN: operatorToken,
    },
  };
}
