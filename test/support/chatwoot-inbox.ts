import assert from 'node:assert/strict';
import type { ChatwootStandIn } from './chatwoot-stand-in.ts';
import type { SeededAccount, TestGateway } from './gateway.ts';

/**
 * Connects an inbox of the account to the stand-in over the API, as a customer's key does, and
 * points the stand-in's webhook at the inbox's callback, as an operator pastes it into Chatwoot.
 */
export async function connectInbox(
  test: TestGateway,
  account: SeededAccount,
  chatwoot: ChatwootStandIn,
): Promise<{ id: string; chatwoot: { callback_path: string } }> {
  const response = await test.post('/api/webhooks', chatwoot.inboxRequest(), account.apiKey);
  assert.equal(response.statusCode, 201, response.body);
  const inbox = response.json() as { id: string; chatwoot: { callback_path: string } };
  chatwoot.callback = async (payload) => {
    const answer = await test.inject({ method: 'POST', url: inbox.chatwoot.callback_path, payload });
    return { status: answer.statusCode, body: answer.json() as Record<string, unknown> };
  };
  return inbox;
}
