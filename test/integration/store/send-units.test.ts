import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { Message, WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { GroupCommitter } from '../../../src/store/group-commit.ts';
import { insertMessages } from '../../../src/store/repositories/message-batches.ts';
import { findMessageById, insertMessage } from '../../../src/store/repositories/messages.ts';
import { queueMessageWithUnit, type UnitAdmission, type UnitTerms } from '../../../src/store/repositories/send-units.ts';
import { monthlyUsed, takeMonthlyUnits } from '../../../src/store/repositories/usage.ts';
import { dialects, NO_TIMES, seedNumberRow, suiteStore } from '../../support/databases.ts';

// Sends of one account in one group-commit batch take their units in one statement at the end
// of the batch. The quota must stay exact: earliest first within a batch, never past the limit
// across batches committing side by side.

const PERIOD = '2026-11';

for (const dialect of dialects) {
  describe(`send units taken once per batch (${dialect})`, () => {
    const suite = suiteStore(dialect);

    const seedNumber = () => seedNumberRow(suite.store);

    function outbound(number: WhatsAppNumber, text: string, overrides: Partial<Message> = {}): Message {
      return {
        id: newId('message'),
        accountId: number.accountId,
        numberId: number.id,
        direction: 'outbound',
        fromPhone: number.phone,
        fromLid: null,
        toPhone: '+14155550100' as E164,
        text,
        contentKind: 'text',
        mediaId: null,
        structured: null,
        status: 'queued',
        engineMessageId: null,
        createdAt: new Date(),
        times: { ...NO_TIMES },
        ...overrides,
      };
    }

    /** Queues every message in one batch of a fresh committer and returns their admissions once it committed. */
    function sendInOneBatch(committer: GroupCommitter, messages: Message[], terms: UnitTerms): Promise<UnitAdmission[]> {
      return Promise.all(messages.map((message) => committer.run(async (_trx, batch) => queueMessageWithUnit(batch, message, terms))));
    }

    async function stored(messages: Message[]): Promise<boolean[]> {
      return Promise.all(messages.map(async (message) => (await findMessageById(suite.store.db, message.id)) !== undefined));
    }

    it('a batch past the limit admits its earliest sends up to the limit, and stores exactly those', async () => {
      const number = await seedNumber();
      const committer = new GroupCommitter(suite.store.db, 100);
      const first = await sendInOneBatch(committer, [outbound(number, 'before')], { period: PERIOD, limit: 5 });
      assert.deepEqual(
        first.map((admission) => admission.admitted),
        [true],
      );
      const messages = Array.from({ length: 8 }, (_unused, index) => outbound(number, `send ${index}`));
      const admissions = await sendInOneBatch(committer, messages, { period: PERIOD, limit: 5 });
      assert.deepEqual(
        admissions.map((admission) => admission.admitted),
        [true, true, true, true, false, false, false, false],
      );
      assert.deepEqual(
        await stored(messages),
        [true, true, true, true, false, false, false, false],
        'a row exists exactly when its unit was taken',
      );
      assert.equal(await monthlyUsed(suite.store.db, number.accountId, PERIOD), 5);
    });

    it(`batches committing side by side admit exactly the limit between them`, async () => {
      const number = await seedNumber();
      const limit = 40;
      // Several committers, each with batches side by side, stand for several gateways.
      const committers = [new GroupCommitter(suite.store.db, 7, 3), new GroupCommitter(suite.store.db, 5, 3)];
      const messages = Array.from({ length: limit + 20 }, (_unused, index) => outbound(number, `race ${index}`));
      const admissions = await Promise.all(
        messages.map((message, index) =>
          committers[index % 2]!.run(async (_trx, batch) => queueMessageWithUnit(batch, message, { period: PERIOD, limit })),
        ),
      );
      const admitted = admissions.map((admission) => admission.admitted);
      assert.equal(admitted.filter(Boolean).length, limit);
      assert.deepEqual(await stored(messages), admitted);
      assert.equal(await monthlyUsed(suite.store.db, number.accountId, PERIOD), limit);
    });

    it('unlimited sends are all admitted and all counted; a limit of 0 admits none', async () => {
      const number = await seedNumber();
      const committer = new GroupCommitter(suite.store.db, 100);
      const unlimited = Array.from({ length: 6 }, (_unused, index) => outbound(number, `unlimited ${index}`));
      assert.ok((await sendInOneBatch(committer, unlimited, { period: PERIOD, limit: null })).every((admission) => admission.admitted));
      assert.equal(await monthlyUsed(suite.store.db, number.accountId, PERIOD), 6);
      const none = [outbound(number, 'none 1'), outbound(number, 'none 2')];
      assert.ok((await sendInOneBatch(committer, none, { period: '2026-12', limit: 0 })).every((admission) => !admission.admitted));
      assert.deepEqual(await stored(none), [false, false]);
      assert.equal(await monthlyUsed(suite.store.db, number.accountId, '2026-12'), 0);
    });

    it('a batch that fails is retried one send at a time, and no unit is taken twice', async () => {
      const number = await seedNumber();
      const committer = new GroupCommitter(suite.store.db, 100);
      const messages = Array.from({ length: 4 }, (_unused, index) => outbound(number, `retried ${index}`));
      const terms = { period: PERIOD, limit: 10 };
      const results = await Promise.allSettled([
        ...messages.map((message) => committer.run(async (_trx, batch) => queueMessageWithUnit(batch, message, terms))),
        committer.run(async () => {
          throw new Error('a neighbour fails');
        }),
      ]);
      assert.deepEqual(
        results.map((result) => result.status),
        ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected'],
      );
      assert.ok(results.slice(0, 4).every((result) => result.status === 'fulfilled' && result.value.admitted));
      assert.deepEqual(await stored(messages), [true, true, true, true]);
      assert.equal(await monthlyUsed(suite.store.db, number.accountId, PERIOD), 4);
    });

    it('taking units stops at the limit and reports how many it took', async () => {
      const number = await seedNumber();
      assert.equal(await takeMonthlyUnits(suite.store.db, number.accountId, PERIOD, 10, 4), 4);
      assert.equal(await takeMonthlyUnits(suite.store.db, number.accountId, PERIOD, 10, 4), 4);
      assert.equal(await takeMonthlyUnits(suite.store.db, number.accountId, PERIOD, 10, 4), 2);
      assert.equal(await takeMonthlyUnits(suite.store.db, number.accountId, PERIOD, 10, 4), 0);
      assert.equal(await monthlyUsed(suite.store.db, number.accountId, PERIOD), 10);
    });

    it('several messages written at once are the same rows as written one by one', async () => {
      const number = await seedNumber();
      const at = new Date(1_795_600_000_123);
      const variants: Partial<Message>[] = [
        {},
        {
          direction: 'inbound',
          fromPhone: null,
          fromLid: '12345678901234@lid',
          toPhone: number.phone,
          status: 'received',
          engineMessageId: 'ENGINE-1',
        },
        { text: 'Ünïcode ✓ 🎉 with \'quotes\', "doubles", {braces} and a \\ backslash', contentKind: 'text' },
        { text: '' },
      ];
      const together = variants.map((variant, index) => outbound(number, `together ${index}`, { createdAt: at, ...variant }));
      // Engine ids are unique per number, so the copies written one by one carry their own.
      const alone = together.map((message) => ({
        ...message,
        id: newId('message'),
        engineMessageId: message.engineMessageId && `${message.engineMessageId}-alone`,
      }));
      await insertMessages(suite.store.db, together);
      for (const message of alone) await insertMessage(suite.store.db, message);
      for (const [index, message] of together.entries()) {
        const written = await findMessageById(suite.store.db, message.id);
        assert.deepEqual(written, message, `message ${index} is stored exactly as given`);
        const one = await findMessageById(suite.store.db, alone[index]!.id);
        assert.deepEqual(
          { ...written, id: '', engineMessageId: null },
          { ...one, id: '', engineMessageId: null },
          `message ${index} matches its copy written alone`,
        );
      }
    });
  });
}
