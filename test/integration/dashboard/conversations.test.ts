import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ScopedAccount } from '../../../src/dashboard/context.ts';
import { presentThread } from '../../../src/dashboard/presenters/conversations.ts';
import { newId } from '../../../src/domain/ids.ts';
import type { Message } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import type { Store } from '../../../src/store/database.ts';
import { listAuditEvents } from '../../../src/store/repositories/audit-events.ts';
import { noteChatMessages } from '../../../src/store/repositories/chats.ts';
import { noteContact } from '../../../src/store/repositories/contacts.ts';
import { rememberGroups } from '../../../src/store/repositories/groups.ts';
import { insertReply, reviseMessage, saveReaction } from '../../../src/store/repositories/conversations.ts';
import { insertMessages } from '../../../src/store/repositories/message-batches.ts';
import { saveSelection } from '../../../src/store/repositories/polls.ts';
import { countingStatements, dialects } from '../../support/databases.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';

/** The service as the gateway built it, reading through another store (its own fields copied, the store replaced). */
function readingThrough<Service extends object>(service: Service, store: Store): Service {
  return Object.assign(Object.create(Object.getPrototypeOf(service) as object) as Service, service, { store });
}

// A chat's page: its name however old the chat, its thread read in a few queries whatever its
// length (every open chat tab polls it every 2 s), and the reply box.
for (const dialect of dialects) {
  describe(`dashboard: a chat's page (${dialect})`, () => {
    let test: TestGateway;
    let account: ScopedAccount;
    let number: { id: string; phone: string };
    /** A message of another chat of the account, which each thread's last message quotes. */
    let elsewhere: Message;
    let owner: DashboardClient;

    const message = (peer: string, index: number, extra: Partial<Message> = {}): Message => ({
      id: newId('message'),
      accountId: account.id,
      numberId: number.id,
      direction: index % 2 === 0 ? 'inbound' : 'outbound',
      fromPhone: (index % 2 === 0 ? peer : number.phone) as E164,
      fromLid: null,
      toPhone: (index % 2 === 0 ? number.phone : peer) as E164,
      text: `message ${index}`,
      contentKind: 'text',
      mediaId: null,
      structured: null,
      status: index % 2 === 0 ? 'received' : 'delivered',
      engineMessageId: `QUERIES${newId('message')}`,
      createdAt: new Date(Date.now() - 3_600_000 + index * 1000),
      ...extra,
    });

    /** A chat of `length` messages, each reacted to and edited, with a poll voted on and replies quoting in and out of the thread. */
    const seedThread = async (length: number): Promise<string> => {
      const peer = uniquePhone();
      const messages = Array.from({ length }, (_unused, index) => message(peer, index));
      messages[1] = {
        ...messages[1]!,
        contentKind: 'poll',
        text: '',
        structured: { poll: { question: 'Lunch?', options: ['Yes', 'No'], selectableCount: 1 } },
      };
      const db = test.gateway.store.db;
      await insertMessages(db, messages);
      await noteChatMessages(db, messages);
      for (const [index, stored] of messages.entries()) {
        await saveReaction(db, stored, { reactor: peer, fromUs: false, emoji: '👍', reactedAt: new Date() });
        if (index !== 1)
          await reviseMessage(db, stored, { kind: 'edited', text: `message ${index}, edited`, fromUs: index % 2 === 1, at: new Date() });
      }
      await saveSelection(db, messages[1]!.id, { voter: peer, voterPhone: peer, voterLid: null, options: ['Yes'], votedAt: new Date() });
      await insertReply(db, messages[length - 2]!, { messageId: messages[0]!.id, engineMessageId: messages[0]!.engineMessageId! });
      await insertReply(db, messages[length - 1]!, { messageId: elsewhere.id, engineMessageId: elsewhere.engineMessageId! });
      return peer;
    };

    /** One render of the thread, as GET …/thread makes it, and the statements it ran. */
    const renderCounted = async (peer: string) => {
      const { db, statements } = countingStatements(test.gateway.store.db);
      const store = { ...test.gateway.store, db };
      const gateway = {
        chats: readingThrough(test.gateway.chats, store),
        history: readingThrough(test.gateway.history, store),
        numbers: readingThrough(test.gateway.numbers, store),
        polls: readingThrough(test.gateway.polls, store),
      };
      const thread = await presentThread(gateway, account, number.id, peer);
      return { thread, statements: statements() };
    };

    before(async () => {
      // A short limit on a message's length, so that the reply box's refusal is one of the send's own.
      test = await startTestGateway(dialect, { WAGW_MAX_MESSAGE_LENGTH: '100' });
      const seeded = await seedAccount(test.gateway);
      account = { ...(await test.gateway.accounts.getAccount(seeded.accountId)), scope: accountScope(seeded.accountId) };
      number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      elsewhere = message(uniquePhone(), 0, { text: 'from another chat' });
      await insertMessages(test.gateway.store.db, [elsewhere]);
      const email = `owner-${seeded.accountId}@conversations.test`;
      await createTestUser(test.gateway, { accountId: seeded.accountId, email, password: 'correct horse battery', role: 'owner' });
      owner = new DashboardClient(test);
      assert.equal((await owner.signIn(email, 'correct horse battery')).statusCode, 303);
    });
    after(() => test?.close());

    it('renders a thread of 50 messages with as many queries as one of 5, and shows every reaction, edit, vote and quote', async () => {
      const short = await renderCounted(await seedThread(5));
      const long = await renderCounted(await seedThread(50));

      assert.equal(long.thread.bubbles.length, 50);
      for (const { thread } of [short, long]) {
        const bubbles = thread.bubbles;
        const last = bubbles.length - 1;
        assert.ok(
          bubbles.every((bubble) => bubble.reactions.length === 1 && bubble.reactions[0]!.emoji === '👍'),
          'every bubble shows its reaction',
        );
        assert.deepEqual(bubbles[0]!.earlierTexts, ['message 0']);
        assert.deepEqual(bubbles[1]!.poll, {
          question: 'Lunch?',
          voters: 1,
          options: [
            { option: 'Yes', votes: 1 },
            { option: 'No', votes: 0 },
          ],
        });
        assert.deepEqual(bubbles[last - 1]!.quoted, { text: 'message 0, edited' }, 'a quote of a message of the thread');
        assert.deepEqual(bubbles[last]!.quoted, { text: 'from another chat' }, 'a quote of a message of another chat');
      }
      assert.equal(long.statements, short.statements, `a thread of 50 ran ${long.statements} statements, one of 5 ran ${short.statements}`);
    });

    it('finds chats by a piece of the phone as people write it, the contact’s name or the group’s subject, in any case', async () => {
      const db = test.gateway.store.db;
      const ada = uniquePhone();
      const bob = uniquePhone();
      const groupId = `1203630${Date.now()}@g.us`;
      const chats = [
        message(ada, 0, { text: 'from Ada' }),
        message(bob, 0, { text: 'from Bob' }),
        message(bob, 0, { text: 'in the group', group: { id: groupId, subject: null } }),
      ];
      await insertMessages(db, chats);
      await noteChatMessages(db, chats);
      await noteContact(
        db,
        { numberId: number.id, accountId: account.id },
        { phone: ada as E164, lid: null, whatsappName: 'Ada Lovelace' },
        new Date(),
      );
      const sender = await test.gateway.numbers.findNumber(operatorScope(), number.id);
      await rememberGroups(db, sender, [{ id: groupId, subject: 'Night Shift Crew', description: null, participants: [] }], new Date());

      const titles = async (search: string) => {
        const page = await owner.get(`/conversations?q=${encodeURIComponent(search)}`);
        assert.equal(page.statusCode, 200);
        return [...page.body.matchAll(/<span class="chat-title">\s*([^<]*?)\s*<\/span>/g)].map((match) => match[1]);
      };
      assert.deepEqual(await titles('LOVELACE'), ['Ada Lovelace'], 'the contact’s name, in any case');
      assert.deepEqual(await titles('shift crew'), ['Night Shift Crew'], 'the group’s subject');
      // Bob's last six digits as a person might type them: spaced, with a dash.
      const typed = `${bob.slice(-6, -3)} - ${bob.slice(-3)}`;
      assert.deepEqual(await titles(typed), [bob], 'a piece of the phone, its spacing ignored');
      assert.deepEqual(await titles(groupId.slice(0, 12)), ['Night Shift Crew'], 'a piece of the group id');
      assert.deepEqual(await titles('nobody by this name'), [], 'nothing else');
    });

    it('names a chat older than the newest 100 by its contact name', async () => {
      const db = test.gateway.store.db;
      const oldest = uniquePhone();
      const first = message(oldest, 0, { createdAt: new Date(Date.now() - 7_200_000) });
      await insertMessages(db, [first]);
      await noteChatMessages(db, [first]);
      await noteContact(
        db,
        { numberId: number.id, accountId: account.id },
        { phone: oldest as E164, lid: null, whatsappName: 'Ada Lovelace' },
        new Date(),
      );
      const newer = Array.from({ length: 101 }, (_unused, index) =>
        message(uniquePhone(), 0, { createdAt: new Date(Date.now() - 60_000 + index) }),
      );
      await insertMessages(db, newer);
      await noteChatMessages(db, newer);

      const page = await owner.get(`/conversations/${number.id}/${encodeURIComponent(oldest)}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h1[^>]*>\s*Ada Lovelace\s*</);
      assert.ok(page.body.includes(oldest), 'the phone is shown under the name');
    });

    it('sends a reply and comes back to the chat; a refused one shows the page again with the draft', async () => {
      const peer = uniquePhone();
      const first = message(peer, 0);
      await insertMessages(test.gateway.store.db, [first]);
      await noteChatMessages(test.gateway.store.db, [first]);
      const href = `/conversations/${number.id}/${encodeURIComponent(peer)}`;
      assert.equal((await owner.get(href)).statusCode, 200);
      const replyKey = `dashboard:${crypto.randomUUID()}`;
      const sent = await owner.post(`${href}/reply`, { message: 'On my way', reply_key: replyKey });
      assert.equal(sent.statusCode, 303, sent.body);
      assert.equal(sent.headers.location, href);
      // The form sent again (a double click, a reload of the POST): the same reply, once.
      const again = await owner.post(`${href}/reply`, { message: 'On my way', reply_key: replyKey });
      assert.equal(again.statusCode, 303, again.body);
      const thread = await presentThread(test.gateway, account, number.id, peer);
      assert.ok(thread.bubbles.some((bubble) => bubble.text === 'On my way' && bubble.direction === 'outbound'));
      const replies = await test.gateway.store.db
        .selectFrom('messages')
        .select('id')
        .where('account_id', '=', account.id)
        .where('to_phone', '=', peer)
        .where('direction', '=', 'outbound')
        .execute();
      assert.equal(replies.length, 1, 'the reply was sent once');
      const [reply] = replies;
      const replied = async () =>
        (await listAuditEvents(test.gateway.store.db, { accountId: account.id, limit: 100 })).filter(
          (event) => event.action === 'message.replied' && event.details?.to_phone === peer,
        );
      assert.deepEqual(
        (await replied()).map((event) => [event.actor.kind, event.actor.label, event.targetId, event.details?.via, event.details?.status]),
        [['user', `owner-${account.id}@conversations.test`, reply!.id, 'dashboard', 'sent']],
        'the reply is one audit row naming its user, however often its form was sent',
      );

      const refused = await owner.post(`${href}/reply`, { message: 'x'.repeat(101), reply_key: `dashboard:${crypto.randomUUID()}` });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.ok(refused.body.includes('x'.repeat(101)), 'the draft is kept');
      assert.equal((await replied()).length, 1, 'a refused reply writes no row');

      const otherNumber = await owner.post(`/conversations/num_00000000000000000000000000/${encodeURIComponent(peer)}/reply`, {
        message: 'hi',
      });
      assert.equal(otherNumber.statusCode, 404);
    });
  });
}
