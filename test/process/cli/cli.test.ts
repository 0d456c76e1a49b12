import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyPassword } from '../../../src/accounts/passwords.ts';
import { loadConfig } from '../../../src/config.ts';
import { openStore } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrate.ts';
import { findApiKeyById } from '../../../src/store/repositories/api-keys.ts';
import { findNumberById } from '../../../src/store/repositories/numbers.ts';
import { findUserByEmail } from '../../../src/store/repositories/users.ts';
import { createTestDatabase, dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { expectJsonObject, expectRefusal, runCli } from '../../support/run-cli.ts';

const ISO_UTC_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const API_KEY = /^wagw_live_sk_[0-9a-f]{64}$/;
const RECIPIENT = '+14155550100';
const CONCURRENT_TESTS = 3;

/** "+447700900123" as people write it: "+44 7700 900123". */
const spaced = (phone: string) => `${phone.slice(0, 3)} ${phone.slice(3, 7)} ${phone.slice(7)}`;

let emailCounter = 0;
const uniqueEmail = (name: string) => `${name}-${++emailCounter}@example.com`;

for (const dialect of dialects) {
  // Each test makes its own accounts, so tests may run side by side: each CLI start costs
  // about a second of CPU, and overlapping them is what keeps the file near a minute.
  describe(`operator CLI (${dialect})`, { concurrency: CONCURRENT_TESTS }, () => {
    let test: TestGateway;
    const wagw = (...args: string[]) => runCli(test.database.url, args);
    const newAccount = (plan?: string, customMonthlyLimit?: number) =>
      test.gateway.accounts.createAccount({
        name: 'CLI test',
        ...(plan !== undefined && { plan }),
        ...(customMonthlyLimit !== undefined && { customMonthlyLimit }),
      });
    const newNumber = (accountId: string) => test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
    const send = (fromPhone: string, apiKey: string) =>
      test.post('/send_message', { from_phone: fromPhone, to_phone: RECIPIENT, message: 'hi' }, apiKey);

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test.close());

    describe('every command prints exactly one JSON object with --json and exits 0', { concurrency: CONCURRENT_TESTS }, () => {
      it('migrate --json on a fresh database applies every migration, lists them, and names the database', async () => {
        // A second fresh database, migrated in this process, says what "every migration" is.
        const [fresh, reference] = await Promise.all([createTestDatabase(dialect), createTestDatabase(dialect)]);
        const openFresh = (url: string) => openStore(loadConfig({ DATABASE_URL: url }).database);
        const [freshStore, referenceStore] = [openFresh(fresh.url), openFresh(reference.url)];
        try {
          const result = expectJsonObject(await runCli(fresh.url, ['migrate', '--json']));
          assert.deepEqual(Object.keys(result).sort(), ['applied', 'database']);
          assert.equal(result.database, fresh.url);
          const everyMigration = await migrateToLatest(referenceStore.db, referenceStore.dialect);
          assert.ok(everyMigration.includes('0001-core'));
          assert.deepEqual(result.applied, everyMigration);
          assert.deepEqual(await migrateToLatest(freshStore.db, freshStore.dialect), [], 'nothing is left to apply');
        } finally {
          await Promise.all([freshStore.close(), referenceStore.close()]);
          await Promise.all([fresh.drop(), reference.drop()]);
        }
      });

      it("account create --json prints the stored account; the plan defaults to starter and the limit to the plan's", async () => {
        const [custom, plain] = await Promise.all([
          wagw('account', 'create', '--name', 'Acme', '--plan', 'pro', '--monthly-limit', '5', '--json'),
          wagw('account', 'create', '--name', 'Plain Co', '--json'),
        ]);
        const customAccount = expectJsonObject(custom);
        assert.deepEqual(Object.keys(customAccount).sort(), [
          'created_at',
          'effective_monthly_limit',
          'id',
          'monthly_limit',
          'name',
          'plan',
        ]);
        assert.match(customAccount.id, /^acc_[0-9a-z]{26}$/);
        assert.match(customAccount.created_at, ISO_UTC_MILLISECONDS);
        assert.deepEqual(
          {
            name: customAccount.name,
            plan: customAccount.plan,
            monthly_limit: customAccount.monthly_limit,
            effective_monthly_limit: customAccount.effective_monthly_limit,
          },
          { name: 'Acme', plan: 'pro', monthly_limit: 5, effective_monthly_limit: 5 },
        );
        const plainAccount = expectJsonObject(plain);
        assert.deepEqual(
          {
            name: plainAccount.name,
            plan: plainAccount.plan,
            monthly_limit: plainAccount.monthly_limit,
            effective_monthly_limit: plainAccount.effective_monthly_limit,
          },
          { name: 'Plain Co', plan: 'starter', monthly_limit: null, effective_monthly_limit: 10_000 },
        );
        const stored = await test.gateway.accounts.getAccount(customAccount.id);
        assert.deepEqual(
          { plan: stored.plan, limit: stored.customMonthlyLimit, createdAt: stored.createdAt.toISOString() },
          { plan: 'pro', limit: 5, createdAt: customAccount.created_at },
        );
      });

      it('account update --json changes the plan alone, and "--monthly-limit none" clears the custom limit', async () => {
        const account = await newAccount('pro', 5);
        const planChanged = expectJsonObject(await wagw('account', 'update', account.id, '--plan', 'enterprise', '--json'));
        assert.deepEqual(
          {
            id: planChanged.id,
            plan: planChanged.plan,
            monthly_limit: planChanged.monthly_limit,
            effective_monthly_limit: planChanged.effective_monthly_limit,
          },
          { id: account.id, plan: 'enterprise', monthly_limit: 5, effective_monthly_limit: 5 },
        );
        const limitCleared = expectJsonObject(await wagw('account', 'update', account.id, '--monthly-limit', 'none', '--json'));
        assert.deepEqual(
          {
            plan: limitCleared.plan,
            monthly_limit: limitCleared.monthly_limit,
            effective_monthly_limit: limitCleared.effective_monthly_limit,
          },
          { plan: 'enterprise', monthly_limit: null, effective_monthly_limit: null },
        );
        assert.equal((await test.gateway.accounts.getAccount(account.id)).customMonthlyLimit, null);
      });

      it('account list --json wraps the accounts in {"accounts": [...]}', async () => {
        const account = await newAccount('pro', 7);
        const listed = expectJsonObject(await wagw('account', 'list', '--json'));
        assert.deepEqual(Object.keys(listed), ['accounts']);
        assert.deepEqual(
          listed.accounts.find((row: { id: string }) => row.id === account.id),
          {
            id: account.id,
            name: 'CLI test',
            plan: 'pro',
            monthly_limit: 7,
            effective_monthly_limit: 7,
            created_at: account.createdAt.toISOString(),
          },
        );
      });

      it('user create --json shows a generated password once, and the password it shows is the one stored', async () => {
        const account = await newAccount();
        const email = uniqueEmail('Owner');
        const created = expectJsonObject(
          await wagw('user', 'create', '--email', email, '--account', account.id, '--role', 'owner', '--json'),
        );
        assert.match(created.id, /^usr_[0-9a-z]{26}$/);
        assert.deepEqual(
          { email: created.email, account_id: created.account_id, role: created.role, is_operator: created.is_operator },
          { email: email.toLowerCase(), account_id: account.id, role: 'owner', is_operator: false },
        );
        assert.equal(typeof created.password, 'string');
        assert.ok(created.password.length >= 12, 'a generated password is at least as long as a chosen one must be');
        const row = await test.gateway.store.db
          .selectFrom('users')
          .select('password_hash')
          .where('id', '=', created.id)
          .executeTakeFirstOrThrow();
        assert.ok(await verifyPassword(created.password, row.password_hash));
        const [audit] = await test.gateway.audit.list(operatorScope(), { accountId: account.id, limit: 1 });
        assert.deepEqual(
          [audit?.action, audit?.targetId, audit?.actor.kind, audit?.details],
          ['user.created', created.id, 'cli', { email: email.toLowerCase(), role: 'owner', is_operator: false }],
          'an audit row names the CLI, and never the password',
        );
      });

      it('user create --operator needs no account, and with --password the password is never echoed', async () => {
        const run = await wagw(
          'user',
          'create',
          '--email',
          uniqueEmail('operator'),
          '--operator',
          '--password',
          'operator secret 1',
          '--json',
        );
        assert.ok(!run.stdout.includes('operator secret 1'));
        const operator = expectJsonObject(run);
        assert.ok(!('password' in operator));
        assert.deepEqual(
          { account_id: operator.account_id, role: operator.role, is_operator: operator.is_operator },
          { account_id: null, role: 'admin', is_operator: true },
        );
      });

      it('user list --json wraps the users in {"users": [...]} and never shows a password or its hash', async () => {
        const account = await newAccount();
        const created = await test.gateway.accounts.createUser({ email: uniqueEmail('listed'), accountId: account.id, role: 'admin' });
        const run = await wagw('user', 'list', '--json');
        const listed = expectJsonObject(run);
        assert.deepEqual(Object.keys(listed), ['users']);
        const row = listed.users.find((user: { id: string }) => user.id === created.user.id);
        assert.deepEqual(row, {
          id: created.user.id,
          email: created.user.email,
          account_id: account.id,
          role: 'admin',
          is_operator: false,
          created_at: created.user.createdAt.toISOString(),
        });
        assert.ok(!run.stdout.includes(created.generatedPassword!));
        assert.ok(!run.stdout.includes('scrypt$'));
      });

      it("number list --json lists every number, or only one account's with --account; --json may also come first", async () => {
        const [first, second] = [await newAccount(), await newAccount()];
        const [firstNumber, secondNumber] = [await newNumber(first.id), await newNumber(second.id)];
        const runs = await Promise.all([wagw('--json', 'number', 'list'), wagw('number', 'list', '--account', first.id, '--json')]);
        const [all, one] = runs.map(expectJsonObject);
        assert.deepEqual(Object.keys(all!), ['numbers']);
        const allPhones = all!.numbers.map((number: { phone: string }) => number.phone);
        assert.ok(allPhones.includes(firstNumber.phone) && allPhones.includes(secondNumber.phone));
        assert.deepEqual(
          one!.numbers.map((number: { id: string }) => number.id),
          [firstNumber.id],
        );
        assert.equal(one!.numbers[0].status, 'connected');
      });

      it('number policy sets a preset, a policy of its own, or inheritance; number queue lists and clears the waiting messages', async () => {
        const account = await seedAccount(test.gateway);
        const phone = account.phones[0]!;
        const preset = expectJsonObject(await wagw('number', 'policy', phone, '--preset', 'cautious', '--json'));
        assert.deepEqual([preset.send_policy.source, preset.send_policy.preset], ['number', 'cautious']);
        const custom = expectJsonObject(await wagw('number', 'policy', phone, '--policy', '{"min_gap_ms":3600000}', '--json'));
        assert.deepEqual([custom.send_policy.preset, custom.send_policy.policy.max_gap_ms], [null, 3_600_000]);
        assert.equal((await send(phone, account.apiKey)).statusCode, 200);
        const queued = await send(phone, account.apiKey);
        assert.equal(queued.statusCode, 202, queued.body);
        const queue = expectJsonObject(await wagw('number', 'queue', spaced(phone), '--json'));
        assert.deepEqual(
          [queue.total, queue.counts, queue.messages[0].message_id, queue.messages[0].wait_reason],
          [1, { gap: 1 }, queued.json().message_id, 'gap'],
        );
        const cleared = expectJsonObject(await wagw('number', 'queue', phone, '--clear', '--json'));
        assert.equal(cleared.cancelled, 1);
        const clearRows = (await test.gateway.audit.list(operatorScope(), { accountId: account.accountId, limit: 20 })).filter(
          (row) => row.action === 'number.queue_cleared',
        );
        assert.deepEqual(
          clearRows.map((row) => [row.actor.kind, row.actor.label, row.details?.phone, row.details?.cancelled]),
          [['cli', 'wagw (CLI)', phone, 1]],
          'the clear is an audit row naming the CLI and how many it cancelled',
        );
        const inherited = expectJsonObject(await wagw('number', 'policy', phone, '--inherit', '--json'));
        assert.deepEqual([inherited.send_policy.source, inherited.send_policy.preset], ['gateway', 'off']);
        expectRefusal(await wagw('number', 'policy', phone, '--preset', 'reckless'), 'off, standard, cautious');
      });

      it('number remove --json removes a number by phone or by id and says removed: true', async () => {
        const account = await newAccount();
        const [byPhone, byId] = [await newNumber(account.id), await newNumber(account.id)];
        const runs = await Promise.all([wagw('number', 'remove', byPhone.phone, '--json'), wagw('number', 'remove', byId.id, '--json')]);
        const results = runs.map(expectJsonObject);
        for (const [result, number] of [
          [results[0]!, byPhone],
          [results[1]!, byId],
        ] as const) {
          assert.deepEqual(
            { id: result.id, phone: result.phone, removed: result.removed },
            { id: number.id, phone: number.phone, removed: true },
          );
          assert.equal(await findNumberById(test.gateway.store.db, number.id), undefined);
        }
        const removals = (await test.gateway.audit.list(operatorScope(), { accountId: account.id, limit: 10 })).filter(
          (row) => row.action === 'number.removed',
        );
        assert.deepEqual(
          removals.map((row) => [row.targetId, row.actor.kind]).sort(),
          [
            [byPhone.id, 'cli'],
            [byId.id, 'cli'],
          ].sort(),
          'each removal is an audit row naming the CLI',
        );
      });

      it('key create --json prints a wagw_live_sk_ key, this once, and it authenticates', async () => {
        const seeded = await seedAccount(test.gateway);
        const created = expectJsonObject(await wagw('key', 'create', '--account', seeded.accountId, '--name', 'ci', '--json'));
        assert.match(created.key, API_KEY);
        assert.match(created.id, /^key_[0-9a-z]{26}$/);
        assert.deepEqual(
          { name: created.name, account_id: created.account_id, revoked_at: created.revoked_at, hint: created.hint },
          { name: 'ci', account_id: seeded.accountId, revoked_at: null, hint: `wagw_live_sk_…${created.key.slice(-4)}` },
        );
        assert.deepEqual(created.scopes, ['read', 'send'], 'by default, what every key could do before scopes');
        const response = await send(seeded.phones[0]!, created.key);
        assert.equal(response.statusCode, 200, response.body);
      });

      it('key create --scopes makes a key with just those scopes, which is refused a send naming the one it lacks', async () => {
        const seeded = await seedAccount(test.gateway);
        const created = expectJsonObject(await wagw('key', 'create', '--account', seeded.accountId, '--scopes', 'webhooks,read', '--json'));
        assert.deepEqual(created.scopes, ['read', 'webhooks']);
        const response = await send(seeded.phones[0]!, created.key);
        assert.equal(response.statusCode, 403, response.body);
        assert.equal(response.json().meta.required_scope, 'send');
        expectRefusal(await wagw('key', 'create', '--account', seeded.accountId, '--scopes', 'admin', '--json'), 'admin');
      });

      it('key list --json shows hints and never a key', async () => {
        const account = await newAccount();
        const created = await test.gateway.apiKeys.createKey({ accountId: account.id, name: 'listed' });
        const run = await wagw('key', 'list', '--account', account.id, '--json');
        const listed = expectJsonObject(run);
        assert.deepEqual(Object.keys(listed), ['keys']);
        assert.equal(listed.keys.length, 1);
        assert.deepEqual(
          { id: listed.keys[0].id, hint: listed.keys[0].hint, revoked_at: listed.keys[0].revoked_at },
          { id: created.apiKey.id, hint: created.apiKey.hint, revoked_at: null },
        );
        assert.ok(!run.stdout.includes(created.plaintext), 'the key never appears');
        assert.ok(!run.stdout.includes(created.plaintext.slice('wagw_live_sk_'.length)), 'nor its secret part');
      });
    });

    describe('mistakes exit 1 with a message on stderr naming what was wrong, and nothing on stdout', {
      concurrency: CONCURRENT_TESTS,
    }, () => {
      it('an unknown account is named by number add, key create, key list and account update', async () => {
        const missing = 'acc_01jzzzzzzzzzzzzzzzzzzzzzzz';
        const runs = await Promise.all([
          wagw('number', 'add', '--account', missing, '--phone', uniquePhone(), '--json'),
          wagw('key', 'create', '--account', missing, '--json'),
          wagw('key', 'list', '--account', missing, '--json'),
          wagw('account', 'update', missing, '--plan', 'pro', '--json'),
        ]);
        for (const run of runs) expectRefusal(run, missing);
      });

      it('a phone that is already a number of the gateway is refused, in any spelling', async () => {
        const account = await newAccount();
        const existing = await newNumber(account.id);
        const run = await wagw('number', 'add', '--account', account.id, '--phone', spaced(existing.phone), '--json');
        expectRefusal(run, existing.phone, 'already');
      });

      it('a missing required option is named, and the command does nothing', async () => {
        const account = await newAccount();
        expectRefusal(await wagw('number', 'add', '--account', account.id, '--json'), '--phone');
        assert.deepEqual(await test.gateway.numbers.listNumbers(accountScope(account.id)), []);
      });

      it('an invalid phone is refused and quoted', async () => {
        const account = await newAccount();
        expectRefusal(await wagw('number', 'add', '--account', account.id, '--phone', '12ab', '--json'), '"12ab"');
        assert.deepEqual(await test.gateway.numbers.listNumbers(accountScope(account.id)), []);
      });

      it('an unknown key id on revoke, and an unknown number on remove, are named', async () => {
        const [key, number] = await Promise.all([
          wagw('key', 'revoke', 'key_01jzzzzzzzzzzzzzzzzzzzzzzz', '--json'),
          wagw('number', 'remove', '+14155550199', '--json'),
        ]);
        expectRefusal(key, 'key_01jzzzzzzzzzzzzzzzzzzzzzzz');
        expectRefusal(number, '+14155550199');
      });

      it('an email already registered is refused whatever its case', async () => {
        const account = await newAccount();
        const email = uniqueEmail('Foo').replace('example.com', 'X.com');
        await test.gateway.accounts.createUser({ email, accountId: account.id, password: 'first user password' });
        const run = await wagw('user', 'create', '--email', email.toLowerCase(), '--account', account.id, '--json');
        expectRefusal(run, email.toLowerCase(), 'already');
      });

      it('an unknown plan is refused with the plans there are, and no account is created', async () => {
        const run = await wagw('account', 'create', '--name', 'Gold Co', '--plan', 'gold', '--json');
        expectRefusal(run, '"gold"', 'starter, pro, enterprise');
        assert.ok(!(await test.gateway.accounts.listAccounts()).some((account) => account.name === 'Gold Co'));
      });

      it('a negative or non-numeric --monthly-limit is refused on create and on update', async () => {
        const account = await newAccount('pro', 5);
        const [negative, words] = await Promise.all([
          wagw('account', 'create', '--name', 'Negative', '--monthly-limit', '-5', '--json'),
          wagw('account', 'update', account.id, '--monthly-limit', 'lots', '--json'),
        ]);
        expectRefusal(negative, '--monthly-limit', '"-5"');
        expectRefusal(words, '--monthly-limit', '"lots"');
        assert.ok(!(await test.gateway.accounts.listAccounts()).some((created) => created.name === 'Negative'));
        assert.equal((await test.gateway.accounts.getAccount(account.id)).customMonthlyLimit, 5);
      });

      it('a --password shorter than 12 characters is refused and no user is created', async () => {
        const account = await newAccount();
        const email = uniqueEmail('short');
        const run = await wagw('user', 'create', '--email', email, '--account', account.id, '--password', 'elevenchars', '--json');
        expectRefusal(run, '12 characters');
        assert.equal(await findUserByEmail(test.gateway.store.db, email), undefined);
      });

      it('number set changes only the settings given, and refuses a switch that is neither on nor off', async () => {
        const number = await newNumber((await newAccount()).id);
        const set = expectJsonObject(
          await wagw('number', 'set', number.phone, '--reject-calls', 'on', '--call-reply-text', 'Please write instead.', '--json'),
        );
        assert.deepEqual(
          [set.reject_calls, set.call_reply_text, set.show_online, set.auto_read],
          [true, 'Please write instead.', false, false],
        );
        const cleared = expectJsonObject(await wagw('number', 'set', number.id, '--call-reply-text', '', '--show-online', 'on', '--json'));
        assert.deepEqual([cleared.reject_calls, cleared.call_reply_text, cleared.show_online], [true, null, true]);
        expectRefusal(await wagw('number', 'set', number.phone, '--reject-calls', 'maybe', '--json'), '--reject-calls');
        const stored = await test.gateway.numbers.findNumber(operatorScope(), number.id);
        assert.deepEqual([stored.rejectCalls, stored.callReplyText, stored.showOnline], [true, null, true]);
      });

      it('set-status refuses an unknown status, names it, and leaves the number as it was', async () => {
        const number = await newNumber((await newAccount()).id);
        expectRefusal(await wagw('number', 'set-status', number.phone, 'sleepy', '--json'), '"sleepy"', 'disconnected');
        assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).status, 'connected');
      });
    });

    describe('the CLI works on the database of a running gateway', { concurrency: CONCURRENT_TESTS }, () => {
      it('key revoke --json stamps revoked_at, and the key is refused on the very next API request', async () => {
        const seeded = await seedAccount(test.gateway);
        const beforeRevoke = await send(seeded.phones[0]!, seeded.apiKey);
        assert.equal(beforeRevoke.statusCode, 200, beforeRevoke.body);
        const revoked = expectJsonObject(await wagw('key', 'revoke', seeded.apiKeyId, '--json'));
        assert.equal(revoked.id, seeded.apiKeyId);
        assert.match(revoked.revoked_at, ISO_UTC_MILLISECONDS);
        assert.equal((await findApiKeyById(test.gateway.store.db, seeded.apiKeyId))!.revokedAt!.toISOString(), revoked.revoked_at);
        const afterRevoke = await send(seeded.phones[0]!, seeded.apiKey);
        assert.equal(afterRevoke.statusCode, 401, afterRevoke.body);
        assert.equal(afterRevoke.json().error, 'invalid_api_key');
      });

      it('number add --json prints the phone in E.164 as a connected sandbox number, and it can be sent from at once', async () => {
        const seeded = await seedAccount(test.gateway);
        const phone = uniquePhone();
        const added = expectJsonObject(await wagw('number', 'add', '--account', seeded.accountId, '--phone', spaced(phone), '--json'));
        assert.deepEqual(Object.keys(added).sort(), [
          'account_id',
          'auto_read',
          'call_reply_text',
          'created_at',
          'engine',
          'holder_user_id',
          'id',
          'phone',
          'proxy',
          'reject_calls',
          'show_online',
          'status',
        ]);
        assert.match(added.id, /^num_[0-9a-z]{26}$/);
        assert.match(added.created_at, ISO_UTC_MILLISECONDS);
        assert.deepEqual(
          {
            phone: added.phone,
            engine: added.engine,
            status: added.status,
            account_id: added.account_id,
            holder_user_id: added.holder_user_id,
          },
          { phone, engine: 'sandbox', status: 'connected', account_id: seeded.accountId, holder_user_id: null },
        );
        const response = await send(phone, seeded.apiKey);
        const errors = test.logLines.filter((line) => line.includes('"level":50')).join('\n');
        assert.equal(response.statusCode, 200, `${response.body}\n${errors}`);
        assert.equal(response.json().from_phone, phone);
      });

      it('number set-status --json finds the number by its phone in any spelling, and sends from it get 503 at once', async () => {
        const seeded = await seedAccount(test.gateway);
        const phone = seeded.phones[0]!;
        const updated = expectJsonObject(await wagw('number', 'set-status', spaced(phone), 'disconnected', '--json'));
        assert.deepEqual(
          { phone: updated.phone, status: updated.status, account_id: updated.account_id },
          { phone, status: 'disconnected', account_id: seeded.accountId },
        );
        const response = await send(phone, seeded.apiKey);
        assert.equal(response.statusCode, 503, response.body);
        assert.equal(response.json().error, 'number_not_connected');
        const [row] = (await test.gateway.audit.list(operatorScope(), { accountId: seeded.accountId, limit: 1 })).filter(
          (each) => each.action === 'number.status_simulated',
        );
        assert.deepEqual(
          [row?.actor.kind, row?.details?.phone, row?.details?.status],
          ['cli', phone, 'disconnected'],
          'the rehearsed outage is an audit row naming the CLI',
        );
      });
    });
  });
}
