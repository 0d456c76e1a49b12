import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { assertRefused, operatorApiWorld } from '../../support/operator-api.ts';

/**
 * A number's proxy over the operator API (ADR 0063, docs/operator-api.md#a-numbers-proxy): set,
 * shown only redacted, sealed at rest, cleared, each an audit row; bad URLs and unknown fields
 * are refused without the URL echoed back. That the proxy carries the connection:
 * test/integration/engines/baileys/number-proxy.test.ts.
 */

const PASSWORD = 'hunter2-proxy';

for (const dialect of dialects) {
  describe(`a number's proxy over the operator API (${dialect})`, () => {
    const world = operatorApiWorld(dialect);
    const { call } = world;

    const numberPath = () => `/admin/accounts/${world.account.accountId}/numbers/${world.account.phones[0]}`;

    const numberId = async () => (await call('GET', numberPath())).json().id as string;

    it('sets a proxy that is answered and listed redacted, sealed at rest, and cleared again, each an audit row', async () => {
      const set = await call('POST', `/api${numberPath()}/proxy`, { url: `socks5h://ops:${PASSWORD}@proxy.example:1080` });
      assert.equal(set.statusCode, 200, set.body);
      assert.equal(set.json().proxy, 'socks5h://***@proxy.example:1080');
      assert.ok(!set.body.includes(PASSWORD));
      assert.equal((await call('GET', numberPath())).json().proxy, 'socks5h://***@proxy.example:1080');
      const listed = await call('GET', `/admin/accounts/${world.account.accountId}/numbers`);
      assert.ok(listed.body.includes('socks5h://***@proxy.example:1080') && !listed.body.includes(PASSWORD));

      const stored = await world.test.gateway.store.db
        .selectFrom('whatsapp_numbers')
        .select(['proxy_ciphertext', 'proxy_redacted'])
        .where('phone', '=', world.account.phones[0]!)
        .executeTakeFirstOrThrow();
      assert.ok(stored.proxy_ciphertext !== null && !stored.proxy_ciphertext.includes(PASSWORD), 'the URL is sealed at rest');
      assert.equal(stored.proxy_redacted, 'socks5h://***@proxy.example:1080');

      const cleared = await call('DELETE', `${numberPath()}/proxy`);
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal(cleared.json().proxy, null);

      const id = await numberId();
      const rows = await world.auditOf(world.account.accountId, 2);
      assert.deepEqual(
        rows.map((row) => [row.action, row.target_id, row.actor.kind, row.details.proxy]),
        [
          ['number.proxy_cleared', id, 'operator_token', undefined],
          ['number.proxy_set', id, 'operator_token', 'socks5h://***@proxy.example:1080'],
        ],
      );
      assert.ok(!JSON.stringify(rows).includes(PASSWORD), 'the audit log holds no password');
    });

    it('refuses a URL that is not a proxy, and an unknown field, without echoing the URL', async () => {
      for (const url of [
        `ftp://ops:${PASSWORD}@proxy.example:21`,
        `http://ops:${PASSWORD}@proxy.example`,
        `http://proxy.example:8080/path`,
        PASSWORD,
      ]) {
        const refused = await call('POST', `${numberPath()}/proxy`, { url });
        assertRefused(refused, 400, 'invalid_request', 'url');
        assert.ok(!refused.body.includes(PASSWORD), refused.body);
      }
      assertRefused(await call('POST', `${numberPath()}/proxy`, { url: 'http://proxy.example:8080', via: 'x' }), 400, 'invalid_request');
      assertRefused(await call('POST', `${numberPath()}/proxy`, {}), 400, 'invalid_request');
      assert.equal((await call('GET', numberPath())).json().proxy, null, 'nothing was stored');
    });

    it("does not find another account's number", async () => {
      const path = `/admin/accounts/${world.account.accountId}/numbers/${world.other.phones[0]}/proxy`;
      assertRefused(await call('POST', path, { url: 'http://proxy.example:8080' }), 404, 'number_not_found');
      assertRefused(await call('DELETE', path), 404, 'number_not_found');
    });
  });
}
