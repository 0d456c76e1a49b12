import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { dialects } from '../../support/databases.ts';
import { startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

// The callback URL pasted into Chatwoot must outlive a rotation of the inbox's signing secret: its
// token was derived from the secret, so 24 hours after a rotation (when the previous secret stops
// signing) every agent reply was refused 404, and the path was shown only at creation.
for (const dialect of dialects) {
  describe(`a Chatwoot inbox's callback survives the rotation of its signing secret (${dialect})`, () => {
    let test: TestGateway;
    let chatwoot: ChatwootStandIn;
    let account: SeededAccount;

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv());
      chatwoot = await ChatwootStandIn.start();
      account = await seedAccount(test.gateway, { scopes: ['read', 'send', 'webhooks'] });
    });
    after(async () => {
      await test.close();
      await chatwoot.close();
    });

    const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
      test.inject({ method, url, headers: { authorization: `Bearer ${account.apiKey}` }, ...(payload !== undefined && { payload }) });

    async function createInbox(): Promise<{ id: string; callbackPath: string }> {
      const response = await call('POST', '/api/webhooks', chatwoot.inboxRequest());
      assert.equal(response.statusCode, 201, response.body);
      const inbox = response.json() as { id: string; chatwoot: { callback_path: string } };
      return { id: inbox.id, callbackPath: inbox.chatwoot.callback_path };
    }

    /** What the owner reads of the inbox's callback path, by GET and in the list. */
    async function shownPaths(id: string): Promise<string[]> {
      const one = (await call('GET', `/api/webhooks/${id}`)).json() as { chatwoot: { callback_path: string } };
      const all = (await call('GET', '/api/webhooks')).json() as { webhooks: { id: string; chatwoot?: { callback_path: string } }[] };
      return [one.chatwoot.callback_path, all.webhooks.find((webhook) => webhook.id === id)?.chatwoot?.callback_path ?? 'missing'];
    }

    /** A rotation, and then the end of its 24 hours of overlap, when the previous secret stops signing. */
    async function rotateAndOutliveOverlap(id: string): Promise<void> {
      assert.equal((await call('POST', `/api/webhooks/${id}/rotate_secret`)).statusCode, 200);
      await test.gateway.store.db
        .updateTable('webhooks')
        .set({ previous_secret_expires_at: Date.now() - 1 })
        .where('id', '=', id)
        .execute();
    }

    /** Whether the gateway takes a callback at the path: an event it ignores is 200, a wrong token 404. */
    async function accepted(path: string): Promise<number> {
      return (await test.inject({ method: 'POST', url: path, payload: { event: 'conversation_status_changed' } })).statusCode;
    }

    it('the path shown at creation is the one GET shows, and it still works after a rotation and its overlap', async () => {
      const inbox = await createInbox();
      assert.deepEqual(await shownPaths(inbox.id), [inbox.callbackPath, inbox.callbackPath]);
      await rotateAndOutliveOverlap(inbox.id);
      await rotateAndOutliveOverlap(inbox.id);
      assert.equal(await accepted(inbox.callbackPath), 200);
      assert.deepEqual(await shownPaths(inbox.id), [inbox.callbackPath, inbox.callbackPath]);
      assert.equal(await accepted(`/chatwoot/callbacks/${inbox.id}/${'A'.repeat(43)}`), 404, 'a wrong token is still refused');
    });

    it('an inbox made before tokens were stored keeps the URL it was given, whose token came from its first secret', async () => {
      const inbox = await createInbox();
      // As migration 0048 found it: no stored token, so the one in use is derived from the secret.
      await test.gateway.store.db
        .updateTable('webhooks')
        .set({ chatwoot_callback_token_ciphertext: null })
        .where('id', '=', inbox.id)
        .execute();
      const [legacyPath] = await shownPaths(inbox.id);
      assert.notEqual(legacyPath, inbox.callbackPath);
      assert.equal(await accepted(legacyPath!), 200);
      await rotateAndOutliveOverlap(inbox.id);
      assert.equal(await accepted(legacyPath!), 200, 'the URL in Chatwoot still works after the previous secret expired');
      assert.deepEqual(await shownPaths(inbox.id), [legacyPath, legacyPath]);
    });
  });
}
