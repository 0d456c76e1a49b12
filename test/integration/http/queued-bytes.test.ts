import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const KIB = 1024;
const TEXT_BYTES = 60_000;

// Issue 38 item 7(b): queued messages are rows no meter counted (a cancelled one gives its unit
// back), so queueing large messages and clearing the queue, again and again, grew the database
// from 5 to 157 MiB with the account's usage unchanged. A number's queue now holds at most
// WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER of content (256 KiB here), and a message that leaves without
// being sent (cancelled, expired) keeps its record but not its content.
for (const dialect of dialects) {
  describe(`queued messages are bounded, and cancelled ones keep no content (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER: '256' });
      account = await seedAccount(test.gateway, { numbers: 2 });
    });

    after(() => test?.close());

    const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
    const queue = (fromPhone: string, cycle: number, index: number) =>
      test.post(
        '/send_message',
        { from_phone: fromPhone, to_phone: uniquePhone(), message: `${cycle}.${index} ${'x'.repeat(TEXT_BYTES)}`, send_at: inAnHour() },
        account.apiKey,
      );
    /** The bytes of content the account's message rows hold. */
    async function storedContentBytes(): Promise<number> {
      const row = await test.gateway.store.db
        .selectFrom('messages')
        .select(sql<number | string>`coalesce(sum(octet_length(text) + coalesce(octet_length(structured), 0)), 0)`.as('bytes'))
        .where('account_id', '=', account.accountId)
        .executeTakeFirstOrThrow();
      return Number(row.bytes);
    }

    it('a full queue is 429 queue_full with Retry-After; a clear gives the room back and leaves the content behind, cycle after cycle', async () => {
      for (let cycle = 0; cycle < 3; cycle++) {
        const ids: string[] = [];
        for (let index = 0; index < 4; index++) {
          const queued = await queue(account.phones[0]!, cycle, index);
          assert.equal(queued.statusCode, 202, queued.body);
          ids.push(queued.json().message_id);
        }
        const full = await queue(account.phones[0]!, cycle, 4);
        assert.deepEqual([full.statusCode, full.json().error, full.json().meta.limit_bytes], [429, 'queue_full', 256 * KIB], full.body);
        assert.ok(full.json().meta.queued_bytes >= 4 * TEXT_BYTES);
        assert.ok(Number(full.headers['retry-after']) > 3_000, 'Retry-After: when the first waiting message is due');
        // The bound is the number's: the account's other number still has room.
        const other = await queue(account.phones[1]!, cycle, 0);
        assert.equal(other.statusCode, 202, other.body);
        await cancelAll(account.phones[1]!);

        await cancelAll(account.phones[0]!);
        const cancelled = await test.inject({
          method: 'GET',
          url: `/messages/${ids[0]}`,
          headers: { authorization: `Bearer ${account.apiKey}` },
        });
        assert.deepEqual([cancelled.json().status, cancelled.json().message], ['cancelled', ''], cancelled.body);
        assert.equal(await storedContentBytes(), 0, `after clear ${cycle + 1}, no message content is left in the database`);
      }
    });

    async function cancelAll(phone: string): Promise<void> {
      const cleared = await test.inject({
        method: 'DELETE',
        url: `/numbers/${encodeURIComponent(phone)}/queue`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual([cleared.statusCode, cleared.json().pending], [200, 0], cleared.body);
    }
  });
}
