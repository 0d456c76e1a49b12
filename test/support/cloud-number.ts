import assert from 'node:assert/strict';
import { operatorScope } from '../../src/domain/tenant-scope.ts';
import type { Gateway } from '../../src/main.ts';
import { payloadOf } from './delivery-support.ts';
import { uniquePhone } from './gateway.ts';
import type { GraphApiStandIn, StandInPhone } from './graph-api-stand-in.ts';
import { waitForValue } from './waiting.ts';
import type { WebhookReceiver } from './webhook-receiver.ts';

/** A number of the account on the cloud engine, its settings those of a phone of the Graph API stand-in. */
export async function addCloudNumber(
  gateway: Gateway,
  accountId: string,
  standIn: GraphApiStandIn,
  appSecret: string,
): Promise<{ numberId: string; cloudPhone: string; phone: StandInPhone }> {
  const added = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'cloud' });
  const phone = standIn.addPhone();
  await gateway.cloudNumbers.set(operatorScope(), added.id, {
    phoneNumberId: phone.phoneNumberId,
    businessAccountId: phone.businessAccountId,
    accessToken: phone.accessToken,
    appSecret,
    verifyToken: `verify-${added.id}`,
  });
  return { numberId: added.id, cloudPhone: added.phone, phone };
}

/**
 * The cloud number's session connected on `owner`, the node that serves it: one that started
 * before its settings were stored (failed for want of them) starts again, as the operator API's set does.
 */
export async function connectCloudNumber(owner: Gateway, numberId: string): Promise<void> {
  await waitForValue(async () => {
    const number = await owner.numbers.findNumber(operatorScope(), numberId);
    const status = owner.supervisor.sessionStatus(number);
    if (status === 'connected') return true;
    if (status === 'failed') await owner.supervisor.restart(number);
    return undefined;
  }, 'the cloud session to connect on its owner');
}

/**
 * The person's message of Meta's callback, `message` as incomingText made it, stored once and
 * heard once by the receiver as a `message` event with its text, however often it was delivered.
 */
export async function assertRecordedOnce(
  gateway: Gateway,
  receiver: WebhookReceiver,
  message: Record<string, unknown>,
  text: string,
): Promise<void> {
  const fromPhone = `+${String(message.from)}`;
  const isTheMessage = (request: Parameters<typeof payloadOf>[0]) =>
    payloadOf(request).event === 'message' && payloadOf(request).from_phone === fromPhone;
  const heard = await receiver.waitForRequests(1, isTheMessage);
  assert.equal((payloadOf(heard[0]!).data as { message: string }).message, text);
  const stored = await gateway.store.db.selectFrom('messages').select('id').where('engine_message_id', '=', String(message.id)).execute();
  assert.equal(stored.length, 1, 'stored once');
  assert.equal(receiver.requests.filter(isTheMessage).length, 1, 'one message event');
}
