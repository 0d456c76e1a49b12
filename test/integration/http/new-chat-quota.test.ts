/**
 * GET /new_chat_quota: WhatsApp's cap on the new chats a number may start (ADR 0058), read through
 * the number's session. On the sandbox, which caps nothing; and over the real Baileys engine,
 * whose WhatsApp side is a fake socket answering fetchNewChatMessageCap in Baileys' own shape
 * (NewChatMessageCapInfo), or with the error WhatsApp answers some accounts with.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NewChatMessageCappingStatusType } from 'baileys';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const quotaUrl = (fromPhone: string, prefix = '') => `${prefix}/new_chat_quota?from_phone=${encodeURIComponent(fromPhone)}`;

for (const dialect of dialects) {
  describe(`the new-chat quota on the sandbox (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
      other = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    const read = (apiKey: string, url: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });

    it('answers a sandbox number as uncapped, at both paths', async () => {
      const ours = account.phones[0]!;
      for (const prefix of ['', '/api']) {
        const answer = await read(account.apiKey, quotaUrl(ours, prefix));
        assert.equal(answer.statusCode, 200, answer.body);
        assert.deepEqual(answer.json(), {
          from_phone: ours,
          status: 'none',
          total: null,
          used: null,
          remaining: null,
          cycle_started_at: null,
          cycle_ends_at: null,
          error: null,
        });
      }
    });

    it("refuses another account's number, a bad or missing from_phone and an unknown parameter; a number that is down answers 503", async () => {
      const ours = account.phones[0]!;
      const cases: [string, number, string][] = [
        [quotaUrl(other.phones[0]!), 403, 'phone_not_owned'],
        [quotaUrl('not-a-phone'), 400, 'invalid_phone_number'],
        ['/new_chat_quota', 400, 'invalid_request'],
        [`${quotaUrl(ours)}&fresh=true`, 400, 'invalid_request'],
      ];
      for (const [url, status, error] of cases) {
        const response = await read(account.apiKey, url);
        assert.deepEqual([response.statusCode, response.json().error], [status, error], url);
        assert.equal(typeof response.json().request_id, 'string');
      }
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), ours, 'disconnected');
      try {
        const down = await read(account.apiKey, quotaUrl(ours));
        assert.deepEqual([down.statusCode, down.json().error], [503, 'number_not_connected']);
        assert.ok(down.headers['retry-after'] !== undefined, 'a 503 carries Retry-After');
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), ours, 'connected');
      }
    });
  });

  describe(`the new-chat quota through a linked Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect);
    });
    after(() => linked?.close());

    const read = () =>
      linked.test.inject({ method: 'GET', url: quotaUrl(linked.number.phone), headers: { authorization: `Bearer ${linked.apiKey}` } });

    it("maps WhatsApp's answer: the status, the quota and what is used, the cycle from Unix seconds", async () => {
      linked.socket.newChatCap = {
        total_quota: 250,
        used_quota: 250,
        cycle_start_timestamp: '1795996800',
        cycle_end_timestamp: '1796601600',
        server_sent_timestamp: '1796000000',
        capping_status: NewChatMessageCappingStatusType.CAPPED,
      };
      const capped = await read();
      assert.equal(capped.statusCode, 200, capped.body);
      assert.deepEqual(capped.json(), {
        from_phone: linked.number.phone,
        status: 'capped',
        total: 250,
        used: 250,
        remaining: 0,
        cycle_started_at: new Date(1795996800 * 1000).toISOString(),
        cycle_ends_at: new Date(1796601600 * 1000).toISOString(),
        error: null,
      });

      // Every field of WhatsApp's answer is optional: a warning with no figures is answered as such.
      linked.socket.newChatCap = { capping_status: NewChatMessageCappingStatusType.FIRST_WARNING };
      const warned = (await read()).json();
      assert.deepEqual(
        [warned.status, warned.total, warned.used, warned.remaining, warned.cycle_ends_at],
        ['first_warning', null, null, null, null],
      );
    });

    it('answers unknown, with what WhatsApp said, when WhatsApp refuses the query', async () => {
      linked.socket.newChatCap = new Error('GraphQL server error: Internal Server Error');
      const unknown = await read();
      assert.equal(unknown.statusCode, 200, unknown.body);
      assert.deepEqual(
        [unknown.json().status, unknown.json().total, unknown.json().error],
        ['unknown', null, 'GraphQL server error: Internal Server Error'],
      );
    });
  });
}
