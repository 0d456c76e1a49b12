/**
 * A commit lost after WhatsApp took the message (issue 26, item 5). The statement that records
 * the engine's answer (`sent`) fails as it would while the database restarts; the send's own
 * retries carry it past a short outage, and a longer one leaves the message `unknown`, never
 * `failed`, since it may well have reached the recipient.
 */
import assert from 'node:assert/strict';
import { waitUntil } from '../../support/waiting.ts';
import { after, before, describe, it } from 'node:test';
import type { Kysely, Transaction } from 'kysely';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { GroupCommitter } from '../../../src/store/group-commit.ts';
import type { Database } from '../../../src/store/schema.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

/** The update that records a send as taken by the engine: the only one that sets `sent_at` (several rows at once, at a batch's end). */
const RECORDS_SENT = /update "messages" set .*"sent_at"/;

/**
 * Refuses the `sent` record while `failures` lasts, as a database does while it restarts: the
 * statement throws and the transaction rolls back. It wraps every transaction of the database
 * it is given, so that it sees the record wherever the batch writes it (in an item's work or in
 * the batch's end-of-batch steps).
 */
class SentRecordRefusals {
  failures = 0;
  refused = 0;

  /** `db`, whose transactions refuse the record while failures last. */
  refusingDatabase(db: Kysely<Database>): Kysely<Database> {
    return new Proxy(db, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'transaction') return typeof value === 'function' ? value.bind(target) : value;
        return () => {
          const builder = target.transaction();
          return {
            execute: <T>(work: (trx: Transaction<Database>) => Promise<T>) => builder.execute((trx) => work(this.refusing(trx))),
          };
        };
      },
    });
  }

  private refusing(trx: Transaction<Database>): Transaction<Database> {
    // Statements built in place pass through a plugin; compiled ones through executeQuery.
    const planned = trx.withPlugin({
      transformQuery: (args) => {
        const node = args.node as { kind: string; updates?: { column: { column: { name: string } } }[] };
        if (node.kind === 'UpdateQueryNode' && node.updates?.some((update) => update.column.column.name === 'sent_at'))
          this.refuseIfFailing();
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    return new Proxy(planned, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'executeQuery') return typeof value === 'function' ? value.bind(target) : value;
        return (query: { sql: string }, ...rest: unknown[]) => {
          if (RECORDS_SENT.test(query.sql)) this.refuseIfFailing();
          return (value as (...args: unknown[]) => unknown).call(target, query, ...rest);
        };
      },
    });
  }

  private refuseIfFailing(): void {
    if (this.failures <= 0) return;
    this.failures -= 1;
    this.refused += 1;
    throw new Error('Connection terminated unexpectedly');
  }
}

for (const dialect of dialects) {
  describe(`a commit lost after the engine took the message is retried, and never becomes failed (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let committer: SentRecordRefusals;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['message.status'],
      });
      const { gateway } = test;
      committer = new SentRecordRefusals();
      const refusing = new GroupCommitter(committer.refusingDatabase(gateway.store.db), gateway.config.groupCommit.maxBatchSize);
      // The sender keeps its place in the gateway (the operations were given it when the app was
      // built); only the committer its sends' outcomes are recorded through is the refusing one.
      Reflect.set(Reflect.get(gateway.sender, 'outcomes'), 'committer', refusing);
    });
    after(() => test?.close());

    const send = (text: string) =>
      test.post('/send_message', { from_phone: account.phones[0], to_phone: '+14155550100', message: text }, account.apiKey);
    const row = (id: string) =>
      test.gateway.store.db
        .selectFrom('messages')
        .select(['status', 'error_code', 'engine_message_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const statusEvents = async (id: string) =>
      (await test.gateway.store.db.selectFrom('webhook_events').select('payload').where('account_id', '=', account.accountId).execute())
        .map(
          (event) =>
            (typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload) as {
              event: string;
              message_id: string;
              status: string;
              error_code: string | null;
            },
        )
        .filter((event) => event.event === 'message.status' && event.message_id === id)
        .map((event) => [event.status, event.error_code]);

    it('a record refused twice is retried: the send answers 200 sent, and the row ends sent with one event', async () => {
      committer.failures = 2;
      committer.refused = 0;
      const response = await send('through a restart');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().status, 'sent');
      assert.equal(committer.refused, 2, 'the record was refused twice first');
      const stored = await row(response.json().message_id);
      // The sandbox's delivery receipt follows the sent record closely and may have landed already.
      assert.ok(['sent', 'delivered'].includes(stored.status), stored.status);
      assert.ok(stored.engine_message_id);
      const events = await statusEvents(response.json().message_id);
      assert.deepEqual(events[0], ['sent', null]);
      assert.equal(events.filter(([status]) => status === 'sent').length, 1, 'one sent event, not one per attempt');
    });

    it("a record refused past the retries leaves the message unknown, with the engine's id, and says so; never failed", async () => {
      committer.failures = Number.POSITIVE_INFINITY;
      const response = await send('through a long outage');
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.json().error, 'send_not_recorded');
      const id = response.json().meta.message_id as string;
      const stored = await row(id);
      // The sandbox's delivery receipt may already have settled it: unknown is what it left.
      assert.ok(['unknown', 'delivered'].includes(stored.status), stored.status);
      assert.equal(stored.error_code, 'outcome_unknown');
      assert.ok(stored.engine_message_id, "the engine's id is kept, so that a receipt can still settle it");
      assert.deepEqual((await statusEvents(id))[0], ['unknown', 'outcome_unknown']);

      // Once the database takes records again, the background retry or the receipt settles it.
      committer.failures = 0;
      // Waited for as a condition: on a busy machine the retry's next turn can come late (waiting.ts).
      await waitUntil(async () => (await row(id)).status !== 'unknown', `${id} settled after the outage`, 100);
      assert.ok(['sent', 'delivered'].includes((await row(id)).status), (await row(id)).status);
      const events = await statusEvents(id);
      assert.ok(events.length >= 2 && events.every(([status]) => status !== 'failed'), JSON.stringify(events));
    });
  });
}
