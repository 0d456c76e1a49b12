import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import type { JsonObject } from '../../support/json.ts';

const CUSTOMER = '+14155550123';
const OTHER = '+14155550124';

// Polls on the sandbox: a poll is sent, a simulated phone votes, each voter's current selection
// is kept (a new vote replaces it, an empty one takes it back), poll.vote carries the totals and
// GET /messages/{id} the tally.
for (const dialect of dialects) {
  describe(`polls and their votes (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let account: SeededAccount;
    let stranger: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      account = await seedAccount(test.gateway);
      stranger = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url('/hook'),
        eventTypes: ['poll.vote', 'message'],
      });
      test.gateway.deliveryWorker.start();
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const sendPoll = (poll: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      test.post('/api/send_message', { from_phone: account.phones[0], to_phone: CUSTOMER, poll, ...extra }, account.apiKey);
    const vote = (messageId: string, options: string[], fromPhone = CUSTOMER, apiKey = account.apiKey) =>
      test.post('/api/sandbox/poll_vote', { from_phone: fromPhone, to_phone: account.phones[0], message_id: messageId, options }, apiKey);
    const get = (path: string) => test.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${account.apiKey}` } });

    async function heardVotes(count: number, messageId: string): Promise<JsonObject[]> {
      const matches = (request: ReceivedRequest) => {
        const body = JSON.parse(request.body);
        return body.event === 'poll.vote' && body.message_id === messageId;
      };
      return (await receiver.waitForRequests(count, matches)).map((request) => JSON.parse(request.body) as JsonObject);
    }

    it("a sent poll is answered and stored as a poll, and each vote replaces the voter's last one", async () => {
      const sent = await sendPoll({ question: 'Which day?', options: ['Monday', 'Tuesday', 'Friday'], selectable_count: 2 });
      assert.equal(sent.statusCode, 200, sent.body);
      const poll = { question: 'Which day?', options: ['Monday', 'Tuesday', 'Friday'], selectable_count: 2 };
      assert.deepEqual([sent.json().poll, sent.json().message], [poll, '']);
      const id = sent.json().message_id as string;

      const first = await vote(id, ['Monday', 'Friday']);
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json().poll.results, {
        voters: 1,
        options: [
          { option: 'Monday', votes: 1 },
          { option: 'Tuesday', votes: 0 },
          { option: 'Friday', votes: 1 },
        ],
      });
      // The voter changes their mind: their earlier choice no longer counts.
      assert.equal((await vote(id, ['Tuesday'])).statusCode, 200);

      const detail = await get(`/api/messages/${id}`);
      assert.equal(detail.statusCode, 200, detail.body);
      assert.equal(detail.json().content_kind, 'poll');
      assert.deepEqual(detail.json().poll, {
        ...poll,
        results: {
          voters: 1,
          options: [
            { option: 'Monday', votes: 0 },
            { option: 'Tuesday', votes: 1 },
            { option: 'Friday', votes: 0 },
          ],
        },
      });

      const events = await heardVotes(2, id);
      const last = events.find((event) => event.options.length === 1)!;
      assert.deepEqual(
        [last.options, last.voter_phone, last.phone, last.voter_lid, last.group],
        [['Tuesday'], CUSTOMER, account.phones[0], null, null],
      );
      assert.deepEqual(
        last.poll.results.options.map((entry: { votes: number }) => entry.votes),
        [0, 1, 0],
      );
    });

    it("an empty vote takes the voter's choice back, and the same vote again is not reported twice", async () => {
      const id = (await sendPoll({ question: 'Coffee or tea?', options: ['Coffee', 'Tea'] })).json().message_id as string;
      assert.equal((await vote(id, ['Tea'])).statusCode, 200);
      assert.equal((await vote(id, ['Tea'])).statusCode, 200);
      const withdrawn = await vote(id, []);
      assert.deepEqual(withdrawn.json().poll.results, {
        voters: 0,
        options: [
          { option: 'Coffee', votes: 0 },
          { option: 'Tea', votes: 0 },
        ],
      });
      const events = await heardVotes(2, id);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal((await heardVotes(2, id)).length, events.length);
      assert.deepEqual(
        events.map((event) => event.options),
        [['Tea'], []],
      );
    });

    it('a poll received from a phone arrives as a message whose content is the poll, and takes votes too', async () => {
      const received = await test.post(
        '/api/sandbox/receive',
        { from_phone: CUSTOMER, to_phone: account.phones[0], poll: { question: 'Lunch?', options: ['Yes', 'No'] } },
        account.apiKey,
      );
      assert.equal(received.statusCode, 200, received.body);
      assert.deepEqual(received.json().poll, { question: 'Lunch?', options: ['Yes', 'No'], selectable_count: 1 });
      const [event] = (
        await receiver.waitForRequests(1, (request) => JSON.parse(request.body).message_id === received.json().message_id)
      ).map((request) => JSON.parse(request.body));
      assert.deepEqual(
        [event.event, event.content_kind, event.poll],
        ['message', 'poll', { question: 'Lunch?', options: ['Yes', 'No'], selectable_count: 1 }],
      );
      assert.equal((await vote(received.json().message_id, ['No'])).statusCode, 200);
    });

    it("a group's poll counts each member's vote, and its events name the group", async () => {
      const group = await test.post(
        '/groups',
        { from_phone: account.phones[0], subject: 'Team lunch', participants: [CUSTOMER, OTHER] },
        account.apiKey,
      );
      assert.equal(group.statusCode, 201, group.body);
      const sent = await test.post(
        '/api/send_message',
        { from_phone: account.phones[0], to_group: group.json().id, poll: { question: 'Where?', options: ['Pizza', 'Sushi'] } },
        account.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      const id = sent.json().message_id as string;
      assert.equal((await vote(id, ['Sushi'])).statusCode, 200);
      const second = await vote(id, ['Sushi'], OTHER);
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(second.json().poll.results, {
        voters: 2,
        options: [
          { option: 'Pizza', votes: 0 },
          { option: 'Sushi', votes: 2 },
        ],
      });
      const stranger = await vote(id, ['Pizza'], '+14155550199');
      assert.deepEqual([stranger.statusCode, stranger.json().error, stranger.json().meta.field], [400, 'invalid_poll_vote', 'from_phone']);
      const events = await heardVotes(2, id);
      assert.deepEqual(
        events.map((event) => event.group),
        [
          { id: group.json().id, subject: 'Team lunch' },
          { id: group.json().id, subject: 'Team lunch' },
        ],
      );
    });

    it('an Idempotency-Key replays the same poll, and is refused for another poll', async () => {
      const poll = { question: 'Again?', options: ['yes', 'no'] };
      const key = { 'idempotency-key': `poll-${Date.now()}` };
      const first = await test.post('/api/send_message', { from_phone: account.phones[0], to_phone: CUSTOMER, poll }, account.apiKey, key);
      const replay = await test.post('/api/send_message', { from_phone: account.phones[0], to_phone: CUSTOMER, poll }, account.apiKey, key);
      assert.deepEqual(
        [replay.statusCode, replay.headers['idempotent-replayed'], replay.json().message_id],
        [200, 'true', first.json().message_id],
      );
      const other = await test.post(
        '/api/send_message',
        { from_phone: account.phones[0], to_phone: CUSTOMER, poll: { ...poll, options: ['yes', 'maybe'] } },
        account.apiKey,
        key,
      );
      assert.deepEqual([other.statusCode, other.json().error], [422, 'idempotency_key_reused']);
    });

    it('bad polls are refused with invalid_poll, naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ question: ' ', options: ['a', 'b'] }, 'poll.question'],
        [{ question: 'Q', options: ['only one'] }, 'poll.options'],
        [{ question: 'Q', options: Array.from({ length: 13 }, (_, index) => `o${index}`) }, 'poll.options'],
        [{ question: 'Q', options: ['same', 'same'] }, 'poll.options[1]'],
        [{ question: 'Q', options: ['a', ' '] }, 'poll.options[1]'],
        [{ question: 'Q', options: ['a', 'b'], selectable_count: 3 }, 'poll.selectable_count'],
        [{ question: 'Q', options: ['a', 'b'], selectable_count: 0 }, 'poll.selectable_count'],
      ];
      for (const [poll, field] of cases) {
        const refused = await sendPoll(poll);
        assert.deepEqual(
          [refused.statusCode, refused.json().error, refused.json().meta?.field],
          [400, 'invalid_poll', field],
          JSON.stringify(poll),
        );
      }
      const withText = await sendPoll({ question: 'Q', options: ['a', 'b'] }, { message: 'hello' });
      assert.deepEqual(
        [withText.statusCode, withText.json().error, withText.json().meta],
        [400, 'invalid_request', { field: 'message', problem: 'conflict' }],
      );
      const withPlace = await sendPoll({ question: 'Q', options: ['a', 'b'] }, { location: { latitude: 1, longitude: 2 } });
      assert.deepEqual(
        [withPlace.statusCode, withPlace.json().error, withPlace.json().meta],
        [400, 'invalid_request', { field: 'poll', problem: 'conflict' }],
      );
    });

    it('a vote is refused on what is no poll of the chat, for options the poll lacks, past its count and from another account', async () => {
      const id = (await sendPoll({ question: 'Pick one', options: ['x', 'y'] })).json().message_id as string;
      const text = (
        await test.post('/api/send_message', { from_phone: account.phones[0], to_phone: CUSTOMER, message: 'hi' }, account.apiKey)
      ).json().message_id as string;
      const notPoll = await vote(text, ['x']);
      assert.deepEqual([notPoll.statusCode, notPoll.json().error, notPoll.json().meta.field], [400, 'invalid_poll_vote', 'message_id']);
      const unknownOption = await vote(id, ['z']);
      assert.deepEqual([unknownOption.json().error, unknownOption.json().meta.field], ['invalid_poll_vote', 'options[0]']);
      const tooMany = await vote(id, ['x', 'y']);
      assert.deepEqual([tooMany.json().error, tooMany.json().meta.field], ['invalid_poll_vote', 'options']);
      const wrongChat = await vote(id, ['x'], OTHER);
      assert.deepEqual([wrongChat.json().error, wrongChat.json().meta.field], ['invalid_poll_vote', 'from_phone']);
      const unknownPoll = await vote('msg_01jd0k6x9g8p1b6m3v7t2q4w5e', ['x']);
      assert.deepEqual([unknownPoll.statusCode, unknownPoll.json().error], [404, 'message_not_found']);
      // Another account can neither vote through its own key on this number, nor name this poll from its number.
      const foreignNumber = await vote(id, ['x'], CUSTOMER, stranger.apiKey);
      assert.deepEqual([foreignNumber.statusCode, foreignNumber.json().error], [403, 'phone_not_owned']);
      const foreignPoll = await test.post(
        '/api/sandbox/poll_vote',
        { from_phone: CUSTOMER, to_phone: stranger.phones[0], message_id: id, options: ['x'] },
        stranger.apiKey,
      );
      assert.deepEqual([foreignPoll.statusCode, foreignPoll.json().error], [404, 'message_not_found']);
    });
  });
}
