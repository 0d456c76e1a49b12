import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import { newWhatsAppNumber, type Account, type Message, type User, type WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { isUniqueViolation } from '../../../src/store/constraint-errors.ts';
import { insertAccount } from '../../../src/store/repositories/accounts.ts';
import { findMessageById, insertMessage, insertMessageWithUnit } from '../../../src/store/repositories/messages.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { deleteNumber, findNumberById, findNumberByPhone, insertNumber } from '../../../src/store/repositories/numbers.ts';
import { monthlyUsed, releaseMonthlyUnit, reserveMonthlyUnit } from '../../../src/store/repositories/usage.ts';
import { findUserByEmail, insertUser } from '../../../src/store/repositories/users.ts';
import { dialects, NO_TIMES, suiteStore } from '../../support/databases.ts';

let phoneCounter = 0;
/** A distinct, possible UK number per call, in the range reserved for fiction. */
function nextPhone(): E164 {
  phoneCounter++;
  return `+447700${String(900000 + phoneCounter).padStart(6, '0')}` as E164;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the write to be refused');
}

for (const dialect of dialects) {
  describe(`repositories (${dialect})`, () => {
    const suite = suiteStore(dialect);

    async function seedAccount(): Promise<Account> {
      const account: Account = { id: newId('account'), name: 'Acme', plan: 'starter', customMonthlyLimit: null, createdAt: new Date() };
      await insertAccount(suite.store.db, account);
      return account;
    }

    async function seedNumber(accountId: string, phone: E164 = nextPhone()): Promise<WhatsAppNumber> {
      const number = newWhatsAppNumber({ id: newId('number'), accountId, phone, engine: 'sandbox', status: 'connected' });
      await insertNumber(suite.store.db, number);
      return number;
    }

    function newUser(accountId: string, email: string): User {
      return { id: newId('user'), accountId, email, role: 'member', isOperator: false, createdAt: new Date() };
    }

    describe('monthly usage', () => {
      it('reserves units up to the limit, then refuses', async () => {
        const { id } = await seedAccount();
        for (let unit = 1; unit <= 3; unit++) {
          assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 3), true, `unit ${unit}`);
        }
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 3), false);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 3), false);
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 3, 'a refusal takes nothing');
      });

      it('a limit of 1 admits exactly one unit', async () => {
        const { id } = await seedAccount();
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 1), true);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 1), false);
      });

      it('a null limit never refuses, and still counts what was used', async () => {
        const { id } = await seedAccount();
        for (let unit = 0; unit < 25; unit++) assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', null), true);
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 25);
      });

      it('a limit of 0 refuses the very first unit and records nothing', async () => {
        const { id } = await seedAccount();
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 0), false);
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 0);
      });

      it('a limit lowered below what was already used refuses further units', async () => {
        const { id } = await seedAccount();
        for (let unit = 0; unit < 5; unit++) await reserveMonthlyUnit(suite.store.db, id, '2026-03', 10);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 2), false);
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 5);
      });

      it('releasing a unit gives exactly one back, so one more can be reserved', async () => {
        const { id } = await seedAccount();
        await reserveMonthlyUnit(suite.store.db, id, '2026-03', 2);
        await reserveMonthlyUnit(suite.store.db, id, '2026-03', 2);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 2), false);
        await releaseMonthlyUnit(suite.store.db, id, '2026-03');
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 1);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 2), true);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 2), false);
      });

      it('releasing never takes usage below 0', async () => {
        const { id } = await seedAccount();
        await releaseMonthlyUnit(suite.store.db, id, '2026-03');
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 0, 'releasing with no usage row');
        await reserveMonthlyUnit(suite.store.db, id, '2026-03', 5);
        await releaseMonthlyUnit(suite.store.db, id, '2026-03');
        await releaseMonthlyUnit(suite.store.db, id, '2026-03');
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 0);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 1), true);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 1), false, 'the extra release did not buy a unit');
      });

      it('each month has its own count', async () => {
        const { id } = await seedAccount();
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 1), true);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-03', 1), false);
        assert.equal(await reserveMonthlyUnit(suite.store.db, id, '2026-04', 1), true);
        await releaseMonthlyUnit(suite.store.db, id, '2026-04');
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 1, 'releasing April leaves March alone');
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-04'), 0);
      });

      it('each account has its own count', async () => {
        const first = await seedAccount();
        const second = await seedAccount();
        assert.equal(await reserveMonthlyUnit(suite.store.db, first.id, '2026-03', 1), true);
        assert.equal(await reserveMonthlyUnit(suite.store.db, second.id, '2026-03', 1), true);
        assert.equal(await monthlyUsed(suite.store.db, first.id, '2026-03'), 1);
      });

      it('30 concurrent reservations at limit 10 admit exactly 10', async () => {
        const { id } = await seedAccount();
        const results = await Promise.all(Array.from({ length: 30 }, () => reserveMonthlyUnit(suite.store.db, id, '2026-03', 10)));
        assert.equal(results.filter(Boolean).length, 10);
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-03'), 10);
      });

      it('a message is stored with its unit only while the limit has room, and concurrently never past it', async () => {
        const { id } = await seedAccount();
        const number = await seedNumber(id);
        const outbound = (text: string): Message => ({
          id: newId('message'),
          accountId: id,
          numberId: number.id,
          direction: 'outbound',
          fromPhone: number.phone,
          fromLid: null,
          toPhone: nextPhone(),
          text,
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status: 'queued',
          engineMessageId: null,
          createdAt: new Date(),
          times: { ...NO_TIMES },
        });
        const first = outbound('first of the month');
        assert.equal(await insertMessageWithUnit(suite.store.db, first, { period: '2026-05', limit: 2 }), true);
        assert.deepEqual(await findMessageById(suite.store.db, first.id), first, 'the row is stored exactly as given');
        const racing = Array.from({ length: 6 }, (_unused, index) => outbound(`racing ${index}`));
        const admitted = await Promise.all(
          racing.map((message) => insertMessageWithUnit(suite.store.db, message, { period: '2026-05', limit: 2 })),
        );
        assert.equal(admitted.filter(Boolean).length, 1, 'one unit was left');
        for (const [index, message] of racing.entries()) {
          assert.equal(
            (await findMessageById(suite.store.db, message.id)) !== undefined,
            admitted[index],
            'a row exists exactly when its unit was taken',
          );
        }
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-05'), 2);
        const unlimited = outbound('enterprise');
        assert.equal(await insertMessageWithUnit(suite.store.db, unlimited, { period: '2026-05', limit: null }), true);
        assert.equal(await monthlyUsed(suite.store.db, id, '2026-05'), 3, 'unlimited still counts');
        assert.equal(await insertMessageWithUnit(suite.store.db, outbound('none'), { period: '2026-06', limit: 0 }), false);
      });
    });

    describe('numbers', () => {
      it('a phone can be registered only once, and the refusal is recognised as a unique violation', async () => {
        const first = await seedAccount();
        const second = await seedAccount();
        const number = await seedNumber(first.id);
        const error = await rejection(seedNumber(second.id, number.phone));
        assert.equal(isUniqueViolation(error), true, `not recognised: ${String(error)}`);
        assert.equal((await findNumberByPhone(suite.store.db, number.phone))?.id, number.id, 'the first registration stands');
      });

      it('a repeated id is recognised as a unique violation too', async () => {
        const account = await seedAccount();
        const number = await seedNumber(account.id);
        const error = await rejection(insertNumber(suite.store.db, { ...number, phone: nextPhone() }));
        assert.equal(isUniqueViolation(error), true, `not recognised: ${String(error)}`);
      });

      it('a missing account is a foreign-key failure, not mistaken for a unique violation', async () => {
        const error = await rejection(seedNumber(newId('account')));
        assert.equal(isUniqueViolation(error), false);
      });

      it('deleting a number keeps its messages, detached from it', async () => {
        const account = await seedAccount();
        const number = await seedNumber(account.id);
        const message: Message = {
          id: newId('message'),
          accountId: account.id,
          numberId: number.id,
          direction: 'outbound',
          fromPhone: number.phone,
          fromLid: null,
          toPhone: '+14155550100' as E164,
          text: 'kept after the number goes',
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status: 'sent',
          engineMessageId: 'engine-1',
          createdAt: new Date(),
        };
        await insertMessage(suite.store.db, message);

        assert.equal(await deleteNumber(suite.store.db, number.id), true);
        assert.equal(await findNumberById(suite.store.db, number.id), undefined);
        assert.equal(await deleteNumber(suite.store.db, number.id), false, 'a second delete finds nothing');

        const row = await suite.store.db
          .selectFrom('messages')
          .select(['number_id', 'text'])
          .where('id', '=', message.id)
          .executeTakeFirst();
        assert.deepEqual(row, { number_id: null, text: 'kept after the number goes' });
        const kept = await findMessageById(suite.store.db, message.id);
        assert.equal(kept?.text, message.text);
        assert.equal(kept?.fromPhone, number.phone);
        const listed = await listMessages(suite.store.db, { accountId: account.id, limit: 10 });
        assert.deepEqual(
          listed.map((listedMessage) => listedMessage.id),
          [message.id],
        );
      });

      it('a deleted number frees its phone for a new registration', async () => {
        const account = await seedAccount();
        const number = await seedNumber(account.id);
        await deleteNumber(suite.store.db, number.id);
        const again = await seedNumber(account.id, number.phone);
        assert.equal((await findNumberByPhone(suite.store.db, number.phone))?.id, again.id);
      });
    });

    describe('users', () => {
      it('an email can belong to one user only, and the refusal is recognised as a unique violation', async () => {
        const first = await seedAccount();
        const second = await seedAccount();
        const email = `owner-${newId('user')}@example.com`;
        const original = newUser(first.id, email);
        await insertUser(suite.store.db, original, 'hash');
        const error = await rejection(insertUser(suite.store.db, newUser(second.id, email), 'hash'));
        assert.equal(isUniqueViolation(error), true, `not recognised: ${String(error)}`);
        assert.equal((await findUserByEmail(suite.store.db, email))?.id, original.id);
      });

      it('different emails are different users', async () => {
        const account = await seedAccount();
        await insertUser(suite.store.db, newUser(account.id, `a-${newId('user')}@example.com`), 'hash');
        await assert.doesNotReject(insertUser(suite.store.db, newUser(account.id, `b-${newId('user')}@example.com`), 'hash'));
      });
    });
  });
}

describe('isUniqueViolation', () => {
  it('is false for anything that is not a database error object', () => {
    for (const value of [undefined, null, 'SQLITE_CONSTRAINT_UNIQUE', 23505, new Error('duplicate key'), {}]) {
      assert.equal(isUniqueViolation(value), false, String(value));
    }
  });
});
