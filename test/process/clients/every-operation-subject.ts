import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { seedAccount, uniquePhone } from '../../support/gateway.ts';
import {
  cloudCallback,
  incomingText,
  ORDER_READY,
  signedHeaders,
  type GraphApiStandIn,
  type StandInPhone,
} from '../../support/graph-api-stand-in.ts';
import { waitUntil } from '../../support/waiting.ts';
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

/**
 * The same program's subject with a number on Meta's Cloud API as the sender (issue 46: the
 * program runs unchanged, and what the engine lacks answers the documented 422): the account's
 * first number moves nowhere; a second number on the `cloud` engine, set up over the operator API
 * against the Graph API stand-in, sends, and the sandbox number is the person it writes to. That
 * person has written first, through Meta's signed callback, so the 24-hour window is open.
 */
export async function everyOperationCloudSubject(
  live: ListeningGateway,
  standIn: GraphApiStandIn,
): Promise<{ env: Record<string, string>; accountId: string; phone: StandInPhone }> {
  const subject = await everyOperationSubject(live);
  const base = subject.env.WAGW_URL!;
  const cloudNumber = await live.gateway.numbers.addNumber(operatorScope(), {
    accountId: subject.accountId,
    phone: uniquePhone(),
    engine: 'cloud',
  });
  await live.gateway.supervisor.numberAdded();
  const phone = standIn.addPhone();
  standIn.templates = [ORDER_READY];
  const appSecret = 'every-operation-app-secret';
  const set = await fetch(`${base}/admin/accounts/${subject.accountId}/numbers/${cloudNumber.id}/cloud`, {
    method: 'POST',
    headers: { authorization: `Bearer ${subject.env.WAGW_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      phone_number_id: phone.phoneNumberId,
      business_account_id: phone.businessAccountId,
      access_token: phone.accessToken,
      app_secret: appSecret,
      verify_token: 'every-operation-verify',
    }),
  });
  if (set.status !== 200) throw new Error(`the cloud settings were refused: ${await set.text()}`);
  await waitUntil(
    async () =>
      live.gateway.supervisor.sessionStatus(await live.gateway.numbers.findNumber(operatorScope(), cloudNumber.id)) === 'connected',
    'the cloud number to connect',
  );
  const person = subject.env.WAGW_FROM!;
  const body = cloudCallback(phone, {
    messages: [incomingText(person.slice(1), 'Hello, cloud')],
    contacts: [{ wa_id: person.slice(1), profile: { name: 'Ada' } }],
  });
  const written = await fetch(`${base}/cloud/callbacks/${cloudNumber.id}`, {
    method: 'POST',
    headers: signedHeaders(appSecret, body),
    body,
  });
  if (written.status !== 200) throw new Error(`the person's first message was refused: ${await written.text()}`);
  return { accountId: subject.accountId, phone, env: { ...subject.env, WAGW_FROM: cloudNumber.phone, WAGW_OTHER: person } };
}
