import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { presentOperatorNumbers } from '../../../src/dashboard/presenters/operator.ts';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { SYSTEM_ACTOR } from '../../../src/domain/audit.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';

// The numbers page shows a card per number (a pause: why, since, until; its queue and last messages) and lets owners and
// admins resume it; the operator console shows every number's card.
for (const dialect of dialects) {
  describe(`dashboard: paused numbers (${dialect})`, () => {
    let test: TestGateway;
    let number: WhatsAppNumber;
    let owner: DashboardClient;
    let member: DashboardClient;
    let outsider: DashboardClient;

    const signedIn = async (accountId: string, role: 'owner' | 'member') => {
      const email = `${role}-${accountId}@pauses.test`;
      await createTestUser(test.gateway, { accountId, email, password: PASSWORD, role });
      const client = new DashboardClient(test);
      assert.equal((await client.signIn(email, PASSWORD)).statusCode, 303);
      return client;
    };

    before(async () => {
      test = await startTestGateway(dialect);
      const accountId = (await test.gateway.accounts.createAccount({ name: 'Acme', plan: 'pro' })).id;
      const otherId = (await test.gateway.accounts.createAccount({ name: 'Globex', plan: 'pro' })).id;
      number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      owner = await signedIn(accountId, 'owner');
      member = await signedIn(accountId, 'member');
      outsider = await signedIn(otherId, 'owner');
    });
    after(() => test?.close());

    /** The number's pause, resume and clear rows, oldest first: action, how, who, from where, and what. */
    const sendsAudit = async (of: WhatsAppNumber) =>
      (await test.gateway.audit.list(operatorScope(), { accountId: of.accountId, limit: 100 }))
        .filter((row) => row.targetId === of.id && ['number.paused', 'number.resumed', 'number.queue_cleared'].includes(row.action))
        .reverse()
        .map((row) => [
          row.action,
          row.actor.kind,
          row.actor.label,
          row.actor.address,
          row.details?.detail ?? row.details?.cancelled ?? row.details?.was_paused,
        ]);

    it('shows the pause with its reason and lift time, and the owner resumes it with the form', async () => {
      const until = new Date(Date.now() + 3_600_000);
      await test.gateway.supervisor.simulatorFor(number)!.restrict(number, { kind: 'restricted', until });
      for (let tries = 0; tries < 200 && test.gateway.pauses.holdOf(number.id) === null; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));

      const page = await owner.get('/numbers');
      assert.match(page.body, /<span class="badge status-paused">paused<\/span>/, "the number's card shows the pause");
      assert.match(page.body, /WhatsApp restricted it \(463\)/);
      assert.ok(page.body.includes(`datetime="${until.toISOString()}"`), 'the lift time is shown');
      assert.match((await member.get('/numbers')).body, /WhatsApp restricted it/, 'a member sees it too');
      assert.doesNotMatch((await member.get('/numbers')).body, /\/resume"/, 'but gets no Resume button');

      const refusedMember = await member.submit('/numbers', `/numbers/${number.id}/resume`, {});
      assert.equal(refusedMember.statusCode, 403);
      const refusedOutsider = await outsider.submit('/numbers', `/numbers/${number.id}/resume`, {});
      assert.equal(refusedOutsider.statusCode, 404, "another account's number is not found");
      const noToken = await owner.post(`/numbers/${number.id}/resume`, {}, { csrf: false });
      assert.equal(noToken.statusCode, 403, 'a post without the CSRF token is refused');
      assert.notEqual(test.gateway.pauses.holdOf(number.id), null, 'none of those resumed it');

      const resumed = await owner.submit('/numbers', `/numbers/${number.id}/resume`, {});
      assert.equal(resumed.statusCode, 303, resumed.body);
      assert.equal(test.gateway.pauses.holdOf(number.id), null);
      assert.doesNotMatch((await owner.get('/numbers')).body, /status-paused">paused/);
      assert.deepEqual(
        await sendsAudit(number),
        [['number.resumed', 'user', `owner-${number.accountId}@pauses.test`, '127.0.0.1', true]],
        "the owner's resume is a row naming them; the refused ones none, and WhatsApp's restriction is no one's action",
      );
    });

    it("shows each number's queue, next send and last messages; the operator console shows every card with its proxy, filters by status, and resumes and clears", async () => {
      // A number of its own: the first test's is still restricted by the sandbox's network.
      const fresh = await test.gateway.numbers.addNumber(operatorScope(), { accountId: number.accountId, phone: uniquePhone() });
      const scope = accountScope(fresh.accountId);
      const key = (await test.gateway.apiKeys.createKey({ accountId: fresh.accountId, name: 'health' })).plaintext;
      await test.gateway.sandboxInbox.receiveOnNumber(scope, fresh.id, '+14155550177', 'hello');
      const sent = await test.post('/send_message', { from_phone: fresh.phone, to_phone: '+14155550177', message: 'one' }, key);
      assert.equal(sent.statusCode, 200, sent.body);
      // Paused with a send policy, the fresh queues what it is asked to send.
      await test.gateway.sendQueues.setNumberPolicy(fresh, { preset: 'standard' }, SYSTEM_ACTOR);
      await test.gateway.numberControl.pause({ scope: operatorScope(), actor: SYSTEM_ACTOR }, fresh, 'held for the test');
      const queued = await test.post('/send_message', { from_phone: fresh.phone, to_phone: '+14155550177', message: 'two' }, key);
      assert.equal(queued.statusCode, 202, queued.body);
      await test.gateway.numbers.setProxy(operatorScope(), fresh.id, 'http://user:secret@127.0.0.1:3128');

      const card = (body: string) => body.slice(body.indexOf('class="card health-card"'));
      const page = card((await owner.get('/numbers')).body);
      assert.match(page, /<dt>Waiting<\/dt><dd>1 message<\/dd>/);
      assert.match(page, /<dt>Engine<\/dt><dd>sandbox<\/dd>/, 'the engine it runs on');
      assert.match(page, /<dt>Next send<\/dt><dd><span class="muted">when resumed<\/span>/, 'a paused queue waits for the resume');
      assert.match(page, /<dt>Last in<\/dt><dd><time/);
      assert.match(page, /<dt>Last out<\/dt><dd><time/);
      assert.match(page, /held for the test/);
      assert.match(page, /\/clear_queue"/, 'the owner may clear the queue');
      assert.doesNotMatch(page, /127\.0\.0\.1:3128/, 'the proxy is the operator’s to see');

      await createTestUser(test.gateway, { accountId: null, email: 'operator@pauses.test', password: PASSWORD, isOperator: true });
      const operator = new DashboardClient(test);
      assert.equal((await operator.signIn('operator@pauses.test', PASSWORD)).statusCode, 303);
      const console = (await operator.get('/operator/numbers')).body;
      assert.match(console, /127\.0\.0\.1:3128/, 'the operator sees the proxy in use');
      assert.doesNotMatch(console, /secret/, 'redacted');
      assert.match((await operator.get('/operator/numbers?status=paused')).body, /class="card health-card"/);
      assert.doesNotMatch((await operator.get('/operator/numbers?status=connecting')).body, /class="card health-card"/, 'filtered out');

      const cleared = await operator.submit('/operator/numbers', `/operator/numbers/${fresh.id}/clear_queue`, {});
      assert.equal(cleared.statusCode, 303, cleared.body);
      assert.equal((await test.gateway.sendQueues.view(fresh, 1, undefined)).total, 0, 'the queue was cleared on the owner');
      const resumed = await operator.submit('/operator/numbers', `/operator/numbers/${fresh.id}/resume`, {});
      assert.equal(resumed.statusCode, 303, resumed.body);
      assert.equal(test.gateway.pauses.holdOf(fresh.id), null, 'resumed through NumberControl');
      assert.deepEqual(
        await sendsAudit(fresh),
        [
          ['number.paused', 'system', null, null, 'held for the test'],
          ['number.queue_cleared', 'user', 'operator@pauses.test', '127.0.0.1', 1],
          ['number.resumed', 'user', 'operator@pauses.test', '127.0.0.1', true],
        ],
        "the console's clear and resume are rows naming the operator",
      );
    });

    it("the owner's Clear queue form cancels what waits, and its row names the owner", async () => {
      const queuedNumber = await test.gateway.numbers.addNumber(operatorScope(), { accountId: number.accountId, phone: uniquePhone() });
      const key = (await test.gateway.apiKeys.createKey({ accountId: queuedNumber.accountId, name: 'clear' })).plaintext;
      await test.gateway.sendQueues.setNumberPolicy(queuedNumber, { preset: 'standard' }, SYSTEM_ACTOR);
      await test.gateway.numberControl.pause({ scope: operatorScope(), actor: SYSTEM_ACTOR }, queuedNumber, null);
      const queued = await test.post('/send_message', { from_phone: queuedNumber.phone, to_phone: '+14155550178', message: 'waits' }, key);
      assert.equal(queued.statusCode, 202, queued.body);

      const cleared = await owner.submit('/numbers', `/numbers/${queuedNumber.id}/clear_queue`, {});
      assert.equal(cleared.statusCode, 303, cleared.body);
      assert.equal((await test.gateway.sendQueues.view(queuedNumber, 1, undefined)).total, 0, 'nothing waits');
      assert.deepEqual(
        (await sendsAudit(queuedNumber)).filter(([action]) => action === 'number.queue_cleared'),
        [['number.queue_cleared', 'user', `owner-${number.accountId}@pauses.test`, '127.0.0.1', 1]],
      );
    });

    it("builds the console's health cards from its one list of numbers, and only those its status filter keeps", async () => {
      const calls: string[] = [];
      /** The service, noting each call of `method` (a call through `this` inside it included). */
      const noting = <Service extends object>(service: Service, method: string): Service =>
        new Proxy(service, {
          get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver) as unknown;
            if (property !== method || typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              calls.push(method);
              return Reflect.apply(value, receiver, args);
            };
          },
        });
      const gateway = {
        ...test.gateway,
        numbers: noting(test.gateway.numbers, 'listNumbers'),
        sendQueues: noting(test.gateway.sendQueues, 'view'),
      };
      const all = await test.gateway.numbers.listNumbers(operatorScope());

      const unfiltered = await presentOperatorNumbers(gateway, operatorScope(), '');
      assert.equal(unfiltered.health.length, all.length);
      assert.deepEqual(calls.sort(), ['listNumbers', ...all.map(() => 'view')].sort());

      calls.length = 0;
      const filtered = await presentOperatorNumbers(gateway, operatorScope(), 'connecting');
      assert.deepEqual(
        filtered.health.map((card) => card.id),
        all.filter((candidate) => candidate.status === 'connecting').map((candidate) => candidate.id),
      );
      assert.equal(filtered.numbers.length, all.length, 'the list itself is not filtered');
      assert.deepEqual(
        calls.sort(),
        ['listNumbers', ...filtered.health.map(() => 'view')].sort(),
        'no card is read for a number filtered out',
      );
    });

    it('shows since when the status holds: a change of status moves it, a change of settings does not', async () => {
      const fresh = await test.gateway.numbers.addNumber(operatorScope(), { accountId: number.accountId, phone: uniquePhone() });
      const sinceOf = async (client: DashboardClient, path: string) => {
        const body = (await client.get(path)).body;
        const card = body.slice(body.indexOf(`data-status-since="${fresh.id}"`));
        return Date.parse(/datetime="([^"]+)"/.exec(card)![1]!);
      };
      const before = Date.now();
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), fresh.id, 'disconnected');
      const changed = (await test.gateway.numbers.findNumber(operatorScope(), fresh.id)).statusChangedAt.getTime();
      assert.ok(changed >= before - 1 && changed <= Date.now(), 'the status change is the time it was written');
      // The Time shown is to the millisecond in its datetime attribute.
      assert.equal(await sinceOf(owner, '/numbers'), changed);
      const statuses = (await owner.get('/numbers/status.json')).json() as { numbers: Array<{ id: string; status_since: string }> };
      assert.equal(
        Date.parse(statuses.numbers.find((entry) => entry.id === fresh.id)!.status_since),
        changed,
        'and the live refresh has it',
      );

      await test.gateway.numbers.setProxy(operatorScope(), fresh.id, 'http://127.0.0.1:3128');
      await test.gateway.numbers.updateSettings(accountScope(fresh.accountId), fresh.id, { rejectCalls: true }, SYSTEM_ACTOR);
      const settled = await test.gateway.numbers.findNumber(operatorScope(), fresh.id);
      assert.ok(settled.updatedAt.getTime() > changed, 'the settings moved the number’s last change');
      assert.equal(settled.statusChangedAt.getTime(), changed, 'but not since when its status holds');
      await createTestUser(test.gateway, { accountId: null, email: 'operator-since@pauses.test', password: PASSWORD, isOperator: true });
      const operator = new DashboardClient(test);
      assert.equal((await operator.signIn('operator-since@pauses.test', PASSWORD)).statusCode, 303);
      assert.equal(await sinceOf(operator, '/operator/numbers'), changed, 'the console’s card says the same');

      await test.gateway.numbers.setSimulatedStatus(operatorScope(), fresh.id, 'connected');
      // A sign-in and several pages lie between the two changes: the second is a later millisecond.
      const reconnected = (await test.gateway.numbers.findNumber(operatorScope(), fresh.id)).statusChangedAt.getTime();
      assert.ok(reconnected > changed, 'connected again: since the new change');
      assert.equal(await sinceOf(owner, '/numbers'), reconnected);
    });

    it('a number written by a node older than the column shows since its last change, not 1970', async () => {
      const older = await test.gateway.numbers.addNumber(operatorScope(), { accountId: number.accountId, phone: uniquePhone() });
      // A node that predates migration 0055 inserts without the column, as a cluster upgraded node by node has.
      await test.gateway.store.db.updateTable('whatsapp_numbers').set({ status_changed_at: null }).where('id', '=', older.id).execute();
      const read = await test.gateway.numbers.findNumber(operatorScope(), older.id);
      assert.equal(read.statusChangedAt.getTime(), read.updatedAt.getTime());
      const statuses = (await owner.get('/numbers/status.json')).json() as { numbers: Array<{ id: string; status_since: string }> };
      assert.equal(
        statuses.numbers.find((entry) => entry.id === older.id)!.status_since,
        read.updatedAt.toISOString(),
        'the live refresh says the same',
      );
    });
  });
}
