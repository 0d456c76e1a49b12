import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { WAMessage } from 'baileys';
import type { WhatsAppNumber } from '../../src/domain/model.ts';
import { operatorScope } from '../../src/domain/tenant-scope.ts';
import { createDatabaseAuthState } from '../../src/engines/baileys/auth-state-store.ts';
import type { GatewayBoundaries } from '../../src/main.ts';
import { SecretBox } from '../../src/secrets/secret-box.ts';
import { RecordingSocketFactory, type FakeSocket } from './fake-whatsapp.ts';
import type { Dialect } from './databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from './gateway.ts';

/** A gateway with one linked, connected Baileys number, whose WhatsApp side is a fake socket. */
export interface LinkedBaileysNumber {
  test: TestGateway;
  accountId: string;
  apiKey: string;
  number: WhatsAppNumber;
  socket: FakeSocket;
  whatsapp: RecordingSocketFactory;
  /** Emits an incoming message and waits until `stored` says the gateway has it. */
  arrives(message: WAMessage, stored: () => Promise<boolean>): Promise<void>;
  close(): Promise<void>;
}

/**
 * Stores creds for a Baileys number as a scan would have left them, and starts its session as
 * at boot: the session connects with them (to the tests' fake socket, or through a proxy).
 */
export async function resumeAsLinked(test: TestGateway, number: WhatsAppNumber): Promise<void> {
  const auth = await createDatabaseAuthState(
    test.gateway.store,
    new SecretBox(test.gateway.config.secretKey!),
    test.gateway.keeper.leaseOf(number.id)!,
    test.gateway.logger,
  );
  auth.state.creds.me = { id: `${number.phone.slice(1)}:1@s.whatsapp.net` };
  await auth.saveCreds();
  await test.gateway.supervisor.resume(number);
}

export async function startLinkedBaileysNumber(
  dialect: Dialect,
  env: Record<string, string> = {},
  boundaries: Omit<GatewayBoundaries, 'baileysSocketFactory'> = {},
): Promise<LinkedBaileysNumber> {
  const whatsapp = new RecordingSocketFactory();
  const test = await startTestGateway(dialect, env, { ...boundaries, baileysSocketFactory: whatsapp.create });
  const accountId = (await test.gateway.accounts.createAccount({ name: 'Real numbers', plan: 'enterprise' })).id;
  const apiKey = (await test.gateway.apiKeys.createKey({ accountId })).plaintext;
  const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'baileys' });
  await resumeAsLinked(test, number);
  const socket = whatsapp.latest;
  socket.openAs(number.phone.slice(1));
  for (let tries = 0; tries < 300 && (await test.gateway.numbers.findNumber(operatorScope(), number.id)).status !== 'connected'; tries++)
    await delay(10);
  return {
    test,
    accountId,
    apiKey,
    number,
    socket,
    whatsapp,
    async arrives(message, stored) {
      socket.emit('messages.upsert', { messages: [message], type: 'notify' });
      for (let tries = 0; tries < 300; tries++) {
        if (await stored()) return;
        await delay(10);
      }
      assert.fail('the gateway never stored what arrived');
    },
    async close() {
      await test.gateway.supervisor.stopAll();
      await test.close();
    },
  };
}
