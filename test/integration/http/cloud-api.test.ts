/**
 * A number on Meta's Cloud API (docs/cloud-api.md), end to end against a local stand-in for the
 * Graph API (test/support/graph-api-stand-in.ts): its settings set over the operator API, sends
 * in the shapes Meta's reference gives, Meta's signed callbacks checked and turned into our
 * messages and statuses, the 24-hour window refused before Meta is asked, Meta's limits pausing
 * the number, and what the Cloud API cannot do answered 422 naming the engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { payloadOf, webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import {
  approvedTemplate,
  cloudCallback,
  GraphApiStandIn,
  incomingText,
  ORDER_READY,
  signedHeaders,
  type StandInPhone,
} from '../../support/graph-api-stand-in.ts';
import { samples } from '../../support/media-samples.ts';
import { waitForValue } from '../../support/waiting.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';

const APP_SECRET = 'cloud-app-secret-0123456789';
const VERIFY_TOKEN = 'verify-me-please';

for (const dialect of dialects) {
  describe(`a number on the Cloud API engine (${dialect})`, () => {
    let standIn: GraphApiStandIn;
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let account: SeededAccount;
    let phone: StandInPhone;
    let cloudPhone: string;
    let numberId: string;
    let operatorToken: string;

    before(async () => {
      standIn = await GraphApiStandIn.start();
      // The pair rate limit holds for ten minutes here (Meta's is six seconds), so that the held send
      // meets it however slow the machine; the test resumes the number by hand.
      test = await startTestGateway(dialect, webhookEnv({ WAGW_CLOUD_API_URL: standIn.url, WAGW_CLOUD_PAIR_RATE_PAUSE_MS: '600000' }));
      test.gateway.deliveryWorker.start();
      receiver = await WebhookReceiver.start();
      account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url(),
        eventTypes: ['message', 'message.status', 'number.paused'],
      });
      operatorToken = (await test.gateway.operatorTokens.create('cloud', CLI_ACTOR)).plaintext;
      const added = await test.gateway.numbers.addNumber(operatorScope(), {
        accountId: account.accountId,
        phone: uniquePhone(),
        engine: 'cloud',
      });
      await test.gateway.supervisor.numberAdded();
      cloudPhone = added.phone;
      numberId = added.id;
      phone = standIn.addPhone();
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
      await standIn?.close();
    });

    const operator = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
      test.inject({
        method,
        url,
        headers: { authorization: `Bearer ${operatorToken}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      });
    const send = (body: Record<string, unknown>) => test.post('/send_message', { from_phone: cloudPhone, ...body }, account.apiKey);
    const callback = (body: string, headers: Record<string, string>) =>
      test.inject({ method: 'POST', url: `/cloud/callbacks/${numberId}`, headers, payload: body });
    /** A person writes to the cloud number, through Meta's signed callback. */
    const personWrites = async (from: string, text: string, at = new Date()) => {
      const message = incomingText(from.slice(1), text, at);
      const body = cloudCallback(phone, { messages: [message], contacts: [{ wa_id: from.slice(1), profile: { name: 'Ada' } }] });
      const answer = await callback(body, signedHeaders(APP_SECRET, body));
      assert.equal(answer.statusCode, 200, answer.body);
      return message.id as string;
    };
    /** GET /templates for the cloud number, answered 200. */
    const listTemplates = async () => {
      const listed = await test.inject({
        method: 'GET',
        url: `/templates?from_phone=${encodeURIComponent(cloudPhone)}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.equal(listed.statusCode, 200, listed.body);
      return listed;
    };
    const wamidOf = async (messageId: string) =>
      (await test.gateway.store.db.selectFrom('messages').select('engine_message_id').where('id', '=', messageId).executeTakeFirstOrThrow())
        .engine_message_id!;
    const events = (event: string, match: (payload: Record<string, unknown>) => boolean) =>
      receiver.waitForRequests(1, (request: ReceivedRequest) => payloadOf(request).event === event && match(payloadOf(request)));

    it('starts failed without settings; the operator sets them (sealed, answered as ***) and it connects', async () => {
      assert.equal(test.gateway.supervisor.sessionStatus(await test.gateway.numbers.findNumber(operatorScope(), numberId)), 'failed');
      const path = `/admin/accounts/${account.accountId}/numbers/${numberId}/cloud`;
      const set = await operator('POST', path, {
        phone_number_id: phone.phoneNumberId,
        business_account_id: phone.businessAccountId,
        access_token: phone.accessToken,
        app_secret: APP_SECRET,
        verify_token: VERIFY_TOKEN,
      });
      assert.equal(set.statusCode, 200, set.body);
      assert.deepEqual(set.json(), {
        number_id: numberId,
        phone_number_id: phone.phoneNumberId,
        business_account_id: phone.businessAccountId,
        access_token: '***',
        app_secret: '***',
        verify_token: '***',
        callback_path: `/cloud/callbacks/${numberId}`,
      });
      assert.ok(![phone.accessToken, APP_SECRET, VERIFY_TOKEN].some((secret) => set.body.includes(secret)));
      const stored = await test.gateway.store.db
        .selectFrom('cloud_numbers')
        .selectAll()
        .where('number_id', '=', numberId)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(stored).includes(phone.accessToken) && !JSON.stringify(stored).includes(APP_SECRET), 'sealed at rest');
      await waitForValue(async () => {
        const number = await test.gateway.numbers.findNumber(operatorScope(), numberId);
        return test.gateway.supervisor.sessionStatus(number) === 'connected' ? true : undefined;
      }, 'the cloud number to connect');
      const notCloud = await operator('POST', `/admin/accounts/${account.accountId}/numbers/${account.phones[0]}/cloud`, {
        phone_number_id: '1',
        business_account_id: '2',
        access_token: 'abcdefgh',
        app_secret: 'abcdefgh',
        verify_token: 'abcdefgh',
      });
      assert.equal(notCloud.statusCode, 400, notCloud.body);
    });

    it("answers Meta's handshake with the challenge only for the verify token", async () => {
      const handshake = (token: string) =>
        test.inject({
          method: 'GET',
          url: `/api/cloud/callbacks/${numberId}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=1158201444`,
        });
      const good = await handshake(VERIFY_TOKEN);
      assert.deepEqual([good.statusCode, good.body], [200, '1158201444']);
      const wrong = await handshake('not-the-token');
      assert.deepEqual([wrong.statusCode, wrong.json().error], [401, 'invalid_webhook_signature']);
      const logged = test.logLines.filter((line) => line.includes('/cloud/callbacks/'));
      assert.ok(logged.length >= 2, 'each handshake leaves its log line');
      assert.ok(
        logged.every((line) => !line.includes(VERIFY_TOKEN) && !line.includes('not-the-token')),
        'the verify token, right or wrong, is masked in the log',
      );
    });

    it('refuses a forged X-Hub-Signature-256 and stores nothing of it; a signed delivery is stored once however often Meta repeats it', async () => {
      const person = uniquePhone();
      const message = incomingText(person.slice(1), 'forged?');
      const body = cloudCallback(phone, { messages: [message] });
      for (const headers of [
        signedHeaders('not-the-app-secret', body),
        { 'content-type': 'application/json' },
        { ...signedHeaders(APP_SECRET, body), 'x-hub-signature-256': signedHeaders(APP_SECRET, `${body} `)['x-hub-signature-256']! },
      ]) {
        const forged = await callback(body, headers);
        assert.deepEqual([forged.statusCode, forged.json().error], [401, 'invalid_webhook_signature']);
      }
      const stored = () =>
        test.gateway.store.db
          .selectFrom('messages')
          .select('id')
          .where('engine_message_id', '=', message.id as string)
          .execute();
      assert.equal((await stored()).length, 0, 'nothing forged is stored');
      for (let attempt = 0; attempt < 2; attempt++) assert.equal((await callback(body, signedHeaders(APP_SECRET, body))).statusCode, 200);
      assert.equal((await stored()).length, 1, 'stored once');
      const heard = await events('message', (payload) => payload.from_phone === person);
      assert.equal((payloadOf(heard[0]!).data as { message: string }).message, 'forged?');
    });

    it("counts a Brazilian person's window whichever form of their number Meta names them by (the ninth digit)", async () => {
      // Meta's wa_id keeps the form the account registered with: here the one before the ninth digit.
      // The send finds the person by the form they wrote from (the recipient directory), and so their window.
      const eightDigits = `8${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;
      await personWrites(`+5511${eightDigits}`, 'oi');
      const sent = await send({ to_phone: `+55119${eightDigits}`, message: 'olá' });
      assert.equal(sent.statusCode, 200, sent.body);
    });

    it('refuses a free-form send outside the 24-hour window before any request to Meta; inside it, sends as the reference says', async () => {
      const person = uniquePhone();
      const before = standIn.requests.length;
      const never = await send({ to_phone: person, message: 'hi' });
      assert.deepEqual([never.statusCode, never.json().error, never.json().meta.window_closed_at], [422, 'window_closed', null]);
      const lastWrote = new Date(Date.now() - 25 * 3_600_000);
      await personWrites(person, 'yesterday', lastWrote);
      const closed = await send({ to_phone: person, message: 'hi' });
      assert.deepEqual(
        [closed.statusCode, closed.json().meta.window_closed_at],
        [422, new Date(lastWrote.getTime() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, '.000Z')],
      );
      assert.equal(standIn.requests.length, before, 'Meta was not asked');

      const inbound = await personWrites(person, 'hello again');
      const sent = await send({ to_phone: person, message: 'Welcome back', reply_to: undefined });
      assert.equal(sent.statusCode, 200, sent.body);
      const [last] = standIn.messagesOf(phone.phoneNumberId).slice(-1);
      assert.deepEqual(last, {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: person.slice(1),
        type: 'text',
        text: { body: 'Welcome back', preview_url: false },
      });
      assert.equal(sent.json().status, 'sent');
      const typing = await test.post('/typing', { from_phone: cloudPhone, to_phone: person, state: 'composing' }, account.apiKey);
      assert.equal(typing.statusCode, 200, typing.body);
      assert.deepEqual(standIn.messagesOf(phone.phoneNumberId).at(-1), {
        messaging_product: 'whatsapp',
        status: 'read',
        message_id: inbound,
        typing_indicator: { type: 'text' },
      });
      assert.deepEqual(standIn.violations, []);
    });

    it("carries Meta's statuses, failed ones with Meta's code, to the webhook", async () => {
      const person = uniquePhone();
      await personWrites(person, 'ping');
      const sent = await send({ to_phone: person, message: 'pong' });
      assert.equal(sent.statusCode, 200, sent.body);
      const wamid = await wamidOf(sent.json().message_id);
      const statuses = ['delivered', 'read'].map((status, index) => ({
        id: wamid,
        status,
        timestamp: String(Math.floor(Date.now() / 1_000) + index),
        recipient_id: person.slice(1),
      }));
      const body = cloudCallback(phone, { statuses });
      assert.equal((await callback(body, signedHeaders(APP_SECRET, body))).statusCode, 200);
      await events('message.status', (payload) => payload.message_id === sent.json().message_id && payload.status === 'read');

      const doomed = await send({ to_phone: person, message: 'will fail' });
      const doomedWamid = await wamidOf(doomed.json().message_id);
      const failed = cloudCallback(phone, {
        statuses: [
          {
            id: doomedWamid,
            status: 'failed',
            timestamp: String(Math.floor(Date.now() / 1_000)),
            recipient_id: person.slice(1),
            errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable' }],
          },
        ],
      });
      assert.equal((await callback(failed, signedHeaders(APP_SECRET, failed))).statusCode, 200);
      const heard = await events(
        'message.status',
        (payload) => payload.message_id === doomed.json().message_id && payload.status === 'failed',
      );
      assert.match(JSON.stringify(payloadOf(heard[0]!)), /131026/);
    });

    it("holds the number's sends on Meta's pair rate limit (131056), and answers 429", async () => {
      const person = uniquePhone();
      await personWrites(person, 'hi');
      standIn.failNext(131056, '(Business Account, Consumer Account) pair rate limit hit');
      const limited = await send({ to_phone: person, message: 'one too many' });
      assert.deepEqual([limited.statusCode, limited.json().error], [429, 'rate_limited']);
      const paused = await events('number.paused', (payload) => payload.reason === 'rate_limited');
      const until = Date.parse(String(payloadOf(paused[0]!).until));
      const before = standIn.requests.length;
      const held = await send({ to_phone: person, message: 'held' });
      assert.ok(until > Date.now(), 'the pause holds until its lift time, ten minutes on');
      assert.deepEqual([held.statusCode, held.json().error, held.json().meta.reason], [503, 'number_paused', 'rate_limited']);
      assert.equal(standIn.requests.length, before, 'nothing more went to Meta');
      assert.equal((await test.post(`/numbers/${numberId}/resume`, undefined, account.apiKey)).statusCode, 200);
    });

    it('uploads a file to the media endpoint and sends it by id; answers 422 naming the engine for what the Cloud API has not', async () => {
      const person = uniquePhone();
      await personWrites(person, 'send me the file');
      const pdf = Buffer.from('%PDF-1.4\n% cloud test\n');
      const sent = await send({
        to_phone: person,
        message: 'Here it is',
        media: { data: pdf.toString('base64'), mime_type: 'application/pdf', filename: 'doc.pdf' },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      const last = standIn.messagesOf(phone.phoneNumberId).at(-1) as {
        type: string;
        document: { id: string; caption: string; filename: string };
      };
      assert.equal(last.type, 'document');
      assert.deepEqual([last.document.caption, last.document.filename], ['Here it is', 'doc.pdf']);
      assert.ok(standIn.requests.some((request) => request.path.endsWith(`/${phone.phoneNumberId}/media`)));

      const group = await test.post(
        '/groups',
        { from_phone: cloudPhone, subject: 'No groups here', participants: [person] },
        account.apiKey,
      );
      assert.deepEqual([group.statusCode, group.json().error, group.json().meta.engine], [422, 'capability_not_supported', 'cloud']);
      const poll = await send({ to_phone: person, poll: { question: 'Which?', options: ['A', 'B'] } });
      assert.deepEqual([poll.statusCode, poll.json().error], [422, 'capability_not_supported']);
      assert.deepEqual(standIn.violations, []);
    });

    it('lists and reads the business’s templates, and sends one whatever the window, its parameters checked against it first', async () => {
      standIn.templates = [
        ORDER_READY,
        {
          id: '2',
          name: 'spring_sale',
          language: 'en_US',
          status: 'PENDING',
          category: 'MARKETING',
          components: [{ type: 'BODY', text: 'Sale!' }],
        },
      ];
      const listed = await listTemplates();
      assert.deepEqual(
        listed
          .json()
          .templates.map((each: { name: string; status: string; header_parameters: number; body_parameters: number }) => [
            each.name,
            each.status,
            each.header_parameters,
            each.body_parameters,
          ]),
        [
          ['order_ready', 'APPROVED', 1, 2],
          ['spring_sale', 'PENDING', 0, 0],
        ],
      );
      const one = await test.inject({
        method: 'GET',
        url: `/api/templates/order_ready?from_phone=${encodeURIComponent(cloudPhone)}&language=en_US`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual([one.statusCode, one.json().body_parameters], [200, 2]);

      const stranger = uniquePhone();
      const sentBefore = standIn.messagesOf(phone.phoneNumberId).length;
      const short = await send({
        to_phone: stranger,
        template: { name: 'order_ready', language: 'en_US', header_parameters: ['4521'], body_parameters: ['Ada'] },
      });
      assert.deepEqual(
        [short.statusCode, short.json().error, short.json().meta],
        [400, 'invalid_template_parameters', { field: 'template.body_parameters', expected: 2 }],
      );
      const pending = await send({ to_phone: stranger, template: { name: 'spring_sale', language: 'en_US' } });
      assert.deepEqual([pending.statusCode, pending.json().error], [404, 'template_not_found']);
      assert.equal(standIn.messagesOf(phone.phoneNumberId).length, sentBefore, 'nothing refused reached Meta');

      const sent = await send({
        to_phone: stranger,
        template: { name: 'order_ready', language: 'en_US', header_parameters: ['4521'], body_parameters: ['Ada', '4521'] },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.deepEqual(standIn.messagesOf(phone.phoneNumberId).at(-1), {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: stranger.slice(1),
        type: 'template',
        template: {
          name: 'order_ready',
          language: { code: 'en_US' },
          components: [
            { type: 'header', parameters: [{ type: 'text', text: '4521' }] },
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Ada' },
                { type: 'text', text: '4521' },
              ],
            },
          ],
        },
      });
      // A sandbox number rehearses the same send against its own templates, checked by the same rules.
      const onSandbox = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: stranger, template: { name: 'order_ready', language: 'en_US' } },
        account.apiKey,
      );
      assert.deepEqual(
        [onSandbox.statusCode, onSandbox.json().error, onSandbox.json().meta],
        [400, 'invalid_template_parameters', { field: 'template.header_parameters', expected: 1 }],
      );
      assert.deepEqual(standIn.violations, []);
    });

    it("lists every page of the business's templates, following Meta's cursors, and sends one from a later page", async () => {
      standIn.templatePageSize = 2;
      standIn.templates = Array.from({ length: 5 }, (_, index) => ({
        id: String(300 + index),
        name: `paged_${index}`,
        language: 'en_US',
        status: 'APPROVED',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Hello {{1}}' }],
      }));
      const before = standIn.requests.length;
      const listed = await listTemplates();
      assert.deepEqual(
        listed.json().templates.map((each: { name: string }) => each.name),
        ['paged_0', 'paged_1', 'paged_2', 'paged_3', 'paged_4'],
      );
      const pages = standIn.requests.slice(before).filter((request) => request.path.endsWith('/message_templates'));
      assert.equal(pages.length, 3, 'three pages of two');
      assert.ok(
        pages.slice(1).every((page) => new URLSearchParams(page.query).has('after')),
        'each later page asked for by its cursor',
      );

      const stranger = uniquePhone();
      const sent = await send({ to_phone: stranger, template: { name: 'paged_3', language: 'en_US', body_parameters: ['Ada'] } });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal((standIn.messagesOf(phone.phoneNumberId).at(-1) as { template: { name: string } }).template.name, 'paged_3');
      assert.deepEqual(standIn.violations, []);
      standIn.templatePageSize = 250;
    });

    it("sends a template's image header as the file it uploads to Meta and its buttons' parameters, each misfit refused with 400 naming the field", async () => {
      standIn.templates = [
        approvedTemplate('10', 'order_shipped', [
          { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2U='] } },
          { type: 'BODY', text: 'Hello {{1}}, your order is on its way.' },
          {
            type: 'BUTTONS',
            buttons: [
              { type: 'URL', text: 'Track it', url: 'https://shop.example/track/{{1}}' },
              { type: 'QUICK_REPLY', text: 'Stop updates' },
              { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550001111' },
            ],
          },
        ]),
        ORDER_READY,
      ];
      const listed = (await listTemplates()).json().templates as { name: string; header_media: string | null; components: unknown[] }[];
      const shipped = listed.find((each) => each.name === 'order_shipped')!;
      assert.equal(shipped.header_media, 'image');
      assert.deepEqual((shipped.components.at(-1) as { buttons: unknown[] }).buttons, [
        { type: 'URL', text: 'Track it', url: 'https://shop.example/track/{{1}}' },
        { type: 'QUICK_REPLY', text: 'Stop updates', url: null },
        { type: 'PHONE_NUMBER', text: 'Call us', url: null },
      ]);

      const stranger = uniquePhone();
      const image = { data: samples.png.toString('base64') };
      const track = { index: 0, type: 'url', value: 'A-4521' };
      const shippedWith = (extra: Record<string, unknown>) =>
        send({ to_phone: stranger, template: { name: 'order_shipped', language: 'en_US', body_parameters: ['Ada'], ...extra } });
      const sentBefore = standIn.messagesOf(phone.phoneNumberId).length;
      const refusals: [Promise<{ statusCode: number; json(): { error: string; meta: { field: string } } }>, string][] = [
        [shippedWith({ button_parameters: [track] }), 'template.header_media'],
        [shippedWith({ header_media: { data: samples.pdf().toString('base64') }, button_parameters: [track] }), 'template.header_media'],
        [
          send({
            to_phone: stranger,
            template: {
              name: 'order_ready',
              language: 'en_US',
              header_parameters: ['4521'],
              body_parameters: ['4521'],
              header_media: image,
            },
          }),
          'template.header_media',
        ],
        [shippedWith({ header_media: image }), 'template.button_parameters'],
        [
          shippedWith({ header_media: image, button_parameters: [track, { index: 3, type: 'quick_reply', value: 'x' }] }),
          'template.button_parameters[1].index',
        ],
        [
          shippedWith({ header_media: image, button_parameters: [track, { index: 2, type: 'quick_reply', value: 'x' }] }),
          'template.button_parameters[1]',
        ],
        [
          shippedWith({ header_media: image, button_parameters: [{ ...track, type: 'quick_reply' }] }),
          'template.button_parameters[0].type',
        ],
        [shippedWith({ header_media: image, button_parameters: [track, track] }), 'template.button_parameters[1].index'],
      ];
      for (const [answer, field] of refusals) {
        const refused = await answer;
        assert.deepEqual(
          [refused.statusCode, refused.json().error, refused.json().meta.field],
          [400, 'invalid_template_parameters', field],
        );
      }
      assert.equal(standIn.messagesOf(phone.phoneNumberId).length, sentBefore, 'nothing refused reached Meta');
      const unknownField = await shippedWith({ header_media: image, button_parameters: [{ ...track, suffix: 'x' }] });
      assert.deepEqual(
        [unknownField.statusCode, unknownField.json().error, unknownField.json().meta.problem],
        [400, 'invalid_request', 'unknown'],
      );

      const uploadsBefore = standIn.requests.filter((request) => request.path.endsWith(`/${phone.phoneNumberId}/media`)).length;
      const sent = await shippedWith({
        header_media: image,
        button_parameters: [track, { index: 1, type: 'quick_reply', value: 'stop-4521' }],
      });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.deepEqual(
        [sent.json().message, sent.json().media.kind, sent.json().media.mime_type],
        ['[template order_shipped]', 'image', 'image/png'],
        'the message is the template by name, with the header file as its media',
      );
      const uploads = standIn.requests.filter((request) => request.path.endsWith(`/${phone.phoneNumberId}/media`));
      assert.equal(uploads.length, uploadsBefore + 1, 'the header image uploaded once');
      const template = (standIn.messagesOf(phone.phoneNumberId).at(-1) as { template: { components: { type: string }[] } }).template;
      const header = template.components[0] as { type: string; parameters: [{ type: string; image: { id: string } }] };
      assert.deepEqual(template.components.slice(1), [
        { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'A-4521' }] },
        { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'stop-4521' }] },
      ]);
      assert.deepEqual([header.type, header.parameters.length, header.parameters[0].type], ['header', 1, 'image']);
      const described = await fetch(`${standIn.url}/v23.0/${header.parameters[0].image.id}`, {
        headers: { authorization: `Bearer ${phone.accessToken}` },
      });
      assert.equal(
        ((await described.json()) as { mime_type: string }).mime_type,
        'image/png',
        'the header names the file the gateway uploaded',
      );

      // An engine that declines templates says so before it fetches the header's file (baileys-send.test.ts).
      assert.deepEqual(standIn.violations, []);
    });

    it('sends a document header from an upload (POST /media) by id, with the upload’s file name; an id that is no upload is 404 naming template.header_media.id', async () => {
      standIn.templates = [
        approvedTemplate('12', 'invoice_ready', [
          { type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['4::ZG9j'] } },
          { type: 'BODY', text: 'Your invoice is attached.' },
        ]),
      ];
      await listTemplates();
      const upload = await test.inject({
        method: 'POST',
        url: '/media?filename=invoice-4521.pdf',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/pdf' },
        payload: samples.pdf(),
      });
      assert.equal(upload.statusCode, 201, upload.body);
      const invoice = (headerMedia: Record<string, unknown>) =>
        send({ to_phone: uniquePhone(), template: { name: 'invoice_ready', language: 'en_US', header_media: headerMedia } });

      const unknown = await invoice({ id: 'med_01aaaaaaaaaaaaaaaaaaaaaaaa' });
      assert.deepEqual(
        [unknown.statusCode, unknown.json().error, unknown.json().meta.field],
        [404, 'media_not_found', 'template.header_media.id'],
      );
      // With an Idempotency-Key the key's record is read first, looking the upload up on its own path.
      const keyed = await test.inject({
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${account.apiKey}`, 'idempotency-key': 'header-media-unknown' },
        payload: {
          from_phone: cloudPhone,
          to_phone: uniquePhone(),
          template: { name: 'invoice_ready', language: 'en_US', header_media: { id: 'med_01aaaaaaaaaaaaaaaaaaaaaaaa' } },
        },
      });
      assert.deepEqual(
        [keyed.statusCode, keyed.json().error, keyed.json().meta.field],
        [404, 'media_not_found', 'template.header_media.id'],
      );
      const sent = await invoice({ id: upload.json().media_id });
      assert.equal(sent.statusCode, 200, sent.body);
      const template = (standIn.messagesOf(phone.phoneNumberId).at(-1) as { template: { components: unknown[] } }).template;
      const [header] = template.components as [{ parameters: [{ type: string; document: { id: string; filename: string } }] }];
      assert.deepEqual(
        [template.components.length, header.parameters[0].type, header.parameters[0].document.filename],
        [1, 'document', 'invoice-4521.pdf'],
      );
      const described = await fetch(`${standIn.url}/v23.0/${header.parameters[0].document.id}`, {
        headers: { authorization: `Bearer ${phone.accessToken}` },
      });
      assert.equal(((await described.json()) as { mime_type: string }).mime_type, 'application/pdf');
      assert.deepEqual(standIn.violations, []);
    });

    it("sends reply buttons in Meta's shape, and a tap comes back as a reply whose text is the title, with the tapped id; other engines answer 422", async () => {
      const person = uniquePhone();
      await personWrites(person, 'menu?');
      const interactive = {
        body: 'Pick one',
        footer: 'Shop',
        buttons: [
          { id: 'yes', title: 'Yes' },
          { id: 'no', title: 'No' },
        ],
      };
      const sent = await send({ to_phone: person, interactive });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.deepEqual((standIn.messagesOf(phone.phoneNumberId).at(-1) as { interactive: unknown }).interactive, {
        type: 'button',
        body: { text: 'Pick one' },
        footer: { text: 'Shop' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
            { type: 'reply', reply: { id: 'no', title: 'No' } },
          ],
        },
      });
      const tap = {
        from: person.slice(1),
        id: `wamid.tap${Date.now()}`,
        timestamp: String(Math.floor(Date.now() / 1_000)),
        type: 'interactive',
        context: { from: '15550000000', id: await wamidOf(sent.json().message_id) },
        interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } },
      };
      const body = cloudCallback(phone, { messages: [tap] });
      assert.equal((await callback(body, signedHeaders(APP_SECRET, body))).statusCode, 200);
      const heard = await events(
        'message',
        (payload) => payload.from_phone === person && (payload.data as { message: string }).message === 'Yes',
      );
      assert.equal((payloadOf(heard[0]!).reply_to as { message_id: string }).message_id, sent.json().message_id);
      // The id is what a bot branches on: it comes beside the title, on the event and on the stored message.
      assert.deepEqual(payloadOf(heard[0]!).interactive_reply, { type: 'button', id: 'yes', title: 'Yes' });
      const read = await test.inject({
        method: 'GET',
        url: `/messages/${String(payloadOf(heard[0]!).message_id)}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual([read.statusCode, read.json().interactive_reply], [200, { type: 'button', id: 'yes', title: 'Yes' }], read.body);
      const at = String(Math.floor(Date.now() / 1_000));
      const row = {
        from: person.slice(1),
        id: `wamid.row${Date.now()}`,
        timestamp: at,
        type: 'interactive',
        interactive: { type: 'list_reply', list_reply: { id: 'size_m', title: 'Medium', description: 'Fits most' } },
      };
      const quickReply = {
        from: person.slice(1),
        id: `wamid.quick${Date.now()}`,
        timestamp: at,
        type: 'button',
        button: { payload: 'stop_promotions', text: 'Stop promotions' },
      };
      const taps = cloudCallback(phone, { messages: [row, quickReply] });
      assert.equal((await callback(taps, signedHeaders(APP_SECRET, taps))).statusCode, 200);
      for (const [text, reply] of [
        ['Medium', { type: 'list', id: 'size_m', title: 'Medium' }],
        ['Stop promotions', { type: 'quick_reply', id: 'stop_promotions', title: 'Stop promotions' }],
      ] as const) {
        const tapped = await events(
          'message',
          (payload) => payload.from_phone === person && (payload.data as { message: string }).message === text,
        );
        assert.deepEqual(payloadOf(tapped[0]!).interactive_reply, reply);
      }

      const twice = await send({
        to_phone: person,
        interactive: {
          body: 'x',
          buttons: [
            { id: 'a', title: 'A' },
            { id: 'a', title: 'B' },
          ],
        },
      });
      assert.deepEqual(
        [twice.statusCode, twice.json().error, twice.json().meta.field],
        [400, 'invalid_interactive', 'interactive.buttons'],
      );
      // A sandbox number rehearses it (test/integration/http/sandbox-meta-rehearsal.test.ts).
      const onSandbox = await test.post('/send_message', { from_phone: account.phones[0], to_phone: person, interactive }, account.apiKey);
      assert.deepEqual([onSandbox.statusCode, onSandbox.json().status], [200, 'sent'], onSandbox.body);
      assert.deepEqual(standIn.violations, []);
    });

    it("maps an ad's referral, a reaction and a photo of Meta's callback as Baileys' events carry them, the photo fetched from Meta with the token", async () => {
      const person = uniquePhone();
      const at = String(Math.floor(Date.now() / 1_000));
      const photoId = standIn.putFile(Buffer.from('\xff\xd8\xff\xe0 a photo', 'latin1'), 'image/jpeg');
      const lead = {
        ...incomingText(person.slice(1), 'I saw your ad'),
        referral: { source_url: 'https://fb.me/ad', source_id: '120200', source_type: 'ad', headline: 'Spring', ctwa_clid: 'ARAkLk' },
      };
      const photo = {
        from: person.slice(1),
        id: `wamid.photo${Date.now()}`,
        timestamp: at,
        type: 'image',
        image: { id: photoId, mime_type: 'image/jpeg', caption: 'look' },
      };
      const body = cloudCallback(phone, { messages: [lead, photo] });
      assert.equal((await callback(body, signedHeaders(APP_SECRET, body))).statusCode, 200);
      const heardLead = await events(
        'message',
        (payload) => payload.from_phone === person && (payload.data as { message: string }).message === 'I saw your ad',
      );
      assert.deepEqual(
        { ...(payloadOf(heardLead[0]!).referral as Record<string, unknown>) },
        {
          source_type: 'ad',
          source_id: '120200',
          source_url: 'https://fb.me/ad',
          headline: 'Spring',
          body: null,
          media_type: null,
          image_url: null,
          video_url: null,
          thumbnail_url: null,
          ctwa_clid: 'ARAkLk',
        },
      );
      await events('message', (payload) => payload.from_phone === person && (payload.data as { message: string }).message === 'look');
      await waitForValue(
        () => (standIn.requests.some((request) => request.path === `/files/${photoId}`) ? true : undefined),
        'the photo to be fetched from where Meta said, with the token',
      );

      const sent = await send({ to_phone: person, message: 'thanks' });
      const reaction = {
        from: person.slice(1),
        id: `wamid.react${Date.now()}`,
        timestamp: at,
        type: 'reaction',
        reaction: { message_id: await wamidOf(sent.json().message_id), emoji: '👍' },
      };
      const reacted = cloudCallback(phone, { messages: [reaction] });
      assert.equal((await callback(reacted, signedHeaders(APP_SECRET, reacted))).statusCode, 200);
      const reactions = await test.gateway.store.db
        .selectFrom('message_reactions')
        .selectAll()
        .where('message_id', '=', sent.json().message_id)
        .execute();
      assert.equal(reactions.length, 1, JSON.stringify(reactions));
    });

    // Last, since it clears the number's settings, which the tests before need.
    it("its settings over the operator API: another account's path is 404 to each, bad input 400, and set and clear are rows naming the token", async () => {
      const rival = await seedAccount(test.gateway);
      const settings = {
        phone_number_id: '1',
        business_account_id: '2',
        access_token: 'abcdefgh',
        app_secret: 'abcdefgh',
        verify_token: 'abcdefgh',
      };
      const elsewhere = `/admin/accounts/${rival.accountId}/numbers/${numberId}/cloud`;
      for (const [method, body] of [
        ['POST', settings],
        ['GET', undefined],
        ['DELETE', undefined],
      ] as const) {
        const refused = await operator(method, elsewhere, body);
        assert.deepEqual([refused.statusCode, refused.json().error], [404, 'number_not_found'], `${method} ${refused.body}`);
      }
      const path = `/admin/accounts/${account.accountId}/numbers/${numberId}/cloud`;
      const unknownField = await operator('POST', path, { ...settings, webhook_url: 'https://example.test' });
      assert.deepEqual(
        [unknownField.statusCode, unknownField.json().error, unknownField.json().meta?.field],
        [400, 'invalid_request', 'webhook_url'],
      );
      const missing = await operator('POST', path, { phone_number_id: '1' });
      assert.deepEqual([missing.statusCode, missing.json().error], [400, 'invalid_request']);
      assert.equal((await operator('GET', path)).json().phone_number_id, phone.phoneNumberId, 'nothing refused changed the settings');

      const cleared = await operator('DELETE', path);
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal(cleared.json().phone_number_id, null);
      const rows = (await test.gateway.audit.list(operatorScope(), { accountId: account.accountId, limit: 100 }))
        .filter((row) => row.targetId === numberId && row.action.startsWith('number.cloud_settings'))
        .reverse();
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor.kind, row.actor.label?.startsWith('cloud ('), row.actor.address]),
        [
          ['number.cloud_settings_set', 'operator_token', true, '127.0.0.1'],
          ['number.cloud_settings_cleared', 'operator_token', true, '127.0.0.1'],
        ],
        "the first test's set and this clear; nothing refused is a row",
      );
      assert.deepEqual(
        (await test.gateway.audit.list(operatorScope(), { accountId: rival.accountId, limit: 100 })).filter((row) =>
          row.action.startsWith('number.cloud_settings'),
        ),
        [],
      );
    });
  });
}
