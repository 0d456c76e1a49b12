import { holdLease } from '../../../support/leases.ts';
import { newWhatsAppNumber } from '../../../../src/domain/model.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { proto, type SignalDataSet, type SignalDataTypeMap } from 'baileys';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { pino } from 'pino';
import { newId } from '../../../../src/domain/ids.ts';
import type { E164 } from '../../../../src/domain/phone.ts';
import { boundedKeyCache, cachedKeys, createDatabaseAuthState } from '../../../../src/engines/baileys/auth-state-store.ts';
import { SecretBox } from '../../../../src/secrets/secret-box.ts';
import type { Store } from '../../../../src/store/database.ts';
import { insertAccount } from '../../../../src/store/repositories/accounts.ts';
import { deleteNumber, insertNumber } from '../../../../src/store/repositories/numbers.ts';
import { dialects, openMigratedTestStore, type MigratedTestStore } from '../../../support/databases.ts';

type KeyCategory = keyof SignalDataTypeMap;

const silent = pino({ level: 'silent' });

const bytes = (length: number): Uint8Array => new Uint8Array(randomBytes(length));

/** One realistic value of every key type Baileys stores, keyed the way Baileys keys them. */
function sampleKeys(): { [T in KeyCategory]: { id: string; value: SignalDataTypeMap[T] } } {
  return {
    'pre-key': { id: '17', value: { public: bytes(32), private: bytes(32) } },
    session: { id: '447700900123.0', value: bytes(256) },
    'sender-key': { id: '120363000000000000@g.us::447700900123::0', value: bytes(180) },
    'sender-key-memory': {
      id: '120363000000000000@g.us',
      value: { '447700900123:1@s.whatsapp.net': true, '447700900124@s.whatsapp.net': false },
    },
    'app-state-sync-key': {
      id: 'AAAAAFpd',
      value: proto.Message.AppStateSyncKeyData.fromObject({
        keyData: bytes(32),
        fingerprint: { rawId: 1234, currentIndex: 2, deviceIndexes: [0, 3] },
        timestamp: 1_767_225_600_000,
      }),
    },
    'app-state-sync-version': {
      id: 'regular_high',
      value: { version: 42, hash: randomBytes(128), indexValueMap: { [randomBytes(32).toString('base64')]: { valueMac: bytes(32) } } },
    },
    'lid-mapping': { id: '447700900123', value: '98765432109876' },
    'device-list': { id: '447700900123', value: ['0', '1', '23'] },
    tctoken: {
      id: '447700900123@s.whatsapp.net',
      value: { token: randomBytes(24), timestamp: '1767225600', senderTimestamp: 1_767_225_600 },
    },
    'identity-key': { id: '447700900123.0', value: bytes(33) },
  };
}

/** A comparable form: bytes as hex whatever their class; protobuf messages and Longs as plain data. */
function normalized(value: unknown): unknown {
  if (value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString('hex')}`;
  if (Array.isArray(value)) return value.map(normalized);
  if (value !== null && typeof value === 'object') {
    if ('toNumber' in value && typeof value.toNumber === 'function') return value.toNumber();
    // JSON has no undefined: a field set to undefined reads back absent, which means the same.
    const present = Object.entries(value).filter(([, entry]) => entry !== undefined);
    return Object.fromEntries(present.map(([key, entry]) => [key, normalized(entry)]));
  }
  return value;
}

/** Counts the statements a store runs, and can make a kind of statement fail like a broken disk. */
class StatementSpy implements KyselyPlugin {
  selects = 0;
  failDeletes = false;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode') this.selects++;
    if (args.node.kind === 'DeleteQueryNode' && this.failDeletes) throw new Error('injected failure: the disk is full');
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

for (const dialect of dialects) {
  describe(`the Baileys auth-state store (${dialect})`, () => {
    let opened: MigratedTestStore;
    let store: Store;
    const secretBox = new SecretBox(randomBytes(32));
    let phoneCounter = 0;

    before(async () => {
      opened = await openMigratedTestStore(dialect);
      store = opened.store;
    });

    after(() => opened?.close());

    async function seedNumber(): Promise<string> {
      const at = new Date();
      const accountId = newId('account');
      await insertAccount(store.db, { id: accountId, name: 'Acme', plan: 'starter', customMonthlyLimit: null, createdAt: at });
      const numberId = newId('number');
      const phone = `+447700${String(800000 + ++phoneCounter).padStart(6, '0')}` as E164;
      await insertNumber(
        store.db,
        newWhatsAppNumber(
          {
            id: numberId,
            accountId,
            phone,
            engine: 'baileys',
            status: 'connecting',
          },
          at,
        ),
      );
      return numberId;
    }

    function keyRows(numberId: string) {
      return store.db.selectFrom('baileys_auth_keys').selectAll().where('number_id', '=', numberId).execute();
    }

    function credsRows(numberId: string) {
      return store.db.selectFrom('baileys_auth_creds').selectAll().where('number_id', '=', numberId).execute();
    }

    it('stores, returns and deletes every Signal key type', async () => {
      const numberId = await seedNumber();
      const { state } = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      for (const [category, { id, value }] of Object.entries(sampleKeys()) as [KeyCategory, { id: string; value: unknown }][]) {
        await state.keys.set({ [category]: { [id]: value } } as SignalDataSet);
        const read = await state.keys.get(category, [id]);
        assert.deepEqual(normalized(read[id]), normalized(value), `${category} reads back as written`);
        if (category === 'app-state-sync-key')
          assert.ok(read[id] instanceof proto.Message.AppStateSyncKeyData, 'as the protobuf class Baileys expects');

        await state.keys.set({ [category]: { [id]: null } } as SignalDataSet);
        assert.deepEqual(await state.keys.get(category, [id]), {}, `${category} is gone once set to null`);
      }
      assert.equal((await keyRows(numberId)).length, 0);
    });

    it('keeps each number and each category apart', async () => {
      const [first, second] = [await seedNumber(), await seedNumber()];
      const firstState = (await createDatabaseAuthState(store, secretBox, await holdLease(store, first), silent)).state;
      const secondState = (await createDatabaseAuthState(store, secretBox, await holdLease(store, second), silent)).state;
      await firstState.keys.set({ session: { shared: bytes(8) }, 'identity-key': { shared: bytes(8) } });
      assert.deepEqual(await secondState.keys.get('session', ['shared']), {});
      const session = await firstState.keys.get('session', ['shared']);
      const identity = await firstState.keys.get('identity-key', ['shared']);
      assert.notDeepEqual(normalized(session.shared), normalized(identity.shared));
    });

    it('reads many keys in one query and leaves out the ones it does not have', async () => {
      const numberId = await seedNumber();
      const spy = new StatementSpy();
      const { state } = await createDatabaseAuthState(
        { ...store, db: store.db.withPlugin(spy) },
        secretBox,
        await holdLease(store, numberId),
        silent,
      );
      const preKeys = Object.fromEntries(
        Array.from({ length: 50 }, (_, index) => [String(index + 1), { public: bytes(32), private: bytes(32) }]),
      );
      await state.keys.set({ 'pre-key': preKeys });

      const selectsBefore = spy.selects;
      const read = await state.keys.get('pre-key', [...Object.keys(preKeys), '999']);
      assert.equal(spy.selects - selectsBefore, 1, 'one query for 51 ids');
      assert.deepEqual(Object.keys(read).sort(), Object.keys(preKeys).sort());
      assert.deepEqual(normalized(read['50']), normalized(preKeys['50']));
    });

    it('writes a set of changes in one transaction: a failure midway leaves nothing behind', async () => {
      const numberId = await seedNumber();
      const spy = new StatementSpy();
      const { state } = await createDatabaseAuthState(
        { ...store, db: store.db.withPlugin(spy) },
        secretBox,
        await holdLease(store, numberId),
        silent,
      );
      await state.keys.set({ session: { old: bytes(16) } });

      // The upserts run first, then the deletion fails: the upserts must be rolled back with it.
      spy.failDeletes = true;
      await assert.rejects(
        Promise.resolve(
          state.keys.set({
            'pre-key': { '1': { public: bytes(32), private: bytes(32) } },
            'sender-key': { g: bytes(8) },
            session: { old: null },
          }),
        ),
        /injected failure/,
      );
      spy.failDeletes = false;

      assert.deepEqual(await state.keys.get('pre-key', ['1']), {});
      assert.deepEqual(await state.keys.get('sender-key', ['g']), {});
      assert.deepEqual(Object.keys(await state.keys.get('session', ['old'])), ['old'], 'the deletion did not happen either');
      assert.equal((await keyRows(numberId)).length, 1);
    });

    it('keeps the creds across a restart', async () => {
      const numberId = await seedNumber();
      const first = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      first.state.creds.me = { id: '447700900123:4@s.whatsapp.net', lid: '98765432109876:4@lid', name: 'Acme' };
      first.state.creds.registered = true;
      first.state.creds.nextPreKeyId = 813;
      await first.saveCreds();

      const restarted = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      assert.deepEqual(normalized(restarted.state.creds), normalized(first.state.creds));
      assert.ok(Buffer.isBuffer(restarted.state.creds.noiseKey.private), 'key material comes back as bytes');
      assert.equal(restarted.state.creds.me?.id, '447700900123:4@s.whatsapp.net');

      const fresh = await createDatabaseAuthState(store, secretBox, await holdLease(store, await seedNumber()), silent);
      assert.notDeepEqual(
        normalized(fresh.state.creds.noiseKey),
        normalized(first.state.creds.noiseKey),
        'a new number starts a new identity',
      );
    });

    it('stores nothing in plaintext', async () => {
      const numberId = await seedNumber();
      const { state, saveCreds } = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      await saveCreds();
      const samples = sampleKeys();
      await state.keys.set(
        Object.fromEntries(Object.entries(samples).map(([category, { id, value }]) => [category, { [id]: value }])) as SignalDataSet,
      );

      const secrets = [
        samples['pre-key'].value.private,
        samples.session.value,
        samples['identity-key'].value,
        samples.tctoken.value.token,
        state.creds.noiseKey.private,
        state.creds.signedIdentityKey.private,
      ].flatMap((secret) => [Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex')]);
      const stored = [
        ...(await keyRows(numberId)).map((row) => row.value_ciphertext),
        ...(await credsRows(numberId)).map((row) => row.creds_ciphertext),
      ];
      assert.equal(stored.length, Object.keys(samples).length + 1);
      for (const ciphertext of stored) {
        for (const secret of [...secrets, samples['lid-mapping'].value, state.creds.advSecretKey]) assert.ok(!ciphertext.includes(secret));
        assert.throws(() => JSON.parse(ciphertext), 'not JSON');
      }
    });

    it('treats a key that cannot be opened as missing, and says so in the log', async () => {
      const numberId = await seedNumber();
      const lines: string[] = [];
      const logger = pino({ level: 'error' }, new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }));
      const { state } = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), logger);
      await state.keys.set({ session: { good: bytes(16), tampered: bytes(16) } });
      // A forged authentication tag: AES-GCM must refuse the value rather than decrypt garbage.
      const [format, iv, , body] = (await keyRows(numberId)).find((row) => row.key_id === 'tampered')!.value_ciphertext.split(':');
      const forged = [format, iv, Buffer.alloc(16).toString('base64'), body].join(':');
      await store.db.updateTable('baileys_auth_keys').set({ value_ciphertext: forged }).where('key_id', '=', 'tampered').execute();

      assert.deepEqual(Object.keys(await state.keys.get('session', ['good', 'tampered'])), ['good']);
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /tampered/);
    });

    it('refuses to start a session whose creds were sealed under another secret key', async () => {
      const numberId = await seedNumber();
      await (await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent)).saveCreds();
      await assert.rejects(
        createDatabaseAuthState(store, new SecretBox(randomBytes(32)), await holdLease(store, numberId), silent),
        /secret key/,
      );
    });

    it('wipes the creds and every key on clear(), and later writes do not bring them back', async () => {
      const numberId = await seedNumber();
      const { state, saveCreds, clear } = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      await saveCreds();
      await state.keys.set({ session: { a: bytes(16) }, 'pre-key': { '1': { public: bytes(32), private: bytes(32) } } });

      await clear();
      await saveCreds();
      await state.keys.set({ session: { b: bytes(16) } });
      assert.equal((await keyRows(numberId)).length, 0);
      assert.equal((await credsRows(numberId)).length, 0);

      const relinked = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      assert.equal(relinked.state.creds.registered, false);
      assert.notDeepEqual(normalized(relinked.state.creds.noiseKey), normalized(state.creds.noiseKey));
    });

    it('removes the auth state with its number', async () => {
      const numberId = await seedNumber();
      const { state, saveCreds } = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      await saveCreds();
      await state.keys.set({ session: { a: bytes(16) } });
      assert.equal(await deleteNumber(store.db, numberId), true);
      assert.equal((await keyRows(numberId)).length, 0);
      assert.equal((await credsRows(numberId)).length, 0);
    });

    it('works behind Baileys’ cache, writing through to the database', async () => {
      const numberId = await seedNumber();
      const { state } = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      const keys = cachedKeys(state.keys, silent);
      const value = bytes(64);
      await keys.set({ session: { a: value } });
      assert.deepEqual(normalized((await keys.get('session', ['a'])).a), normalized(value));

      const restarted = await createDatabaseAuthState(store, secretBox, await holdLease(store, numberId), silent);
      assert.deepEqual(normalized((await restarted.state.keys.get('session', ['a'])).a), normalized(value));
    });
  });
}

describe('the key cache in front of the database', () => {
  it('holds at most its bound, dropping the least recently used key first', async () => {
    const cache = boundedKeyCache(2, 60_000);
    await cache.set('session:a', { a: 1 });
    await cache.set('session:b', { b: 1 });
    assert.deepEqual(cache.get('session:a'), { a: 1 }, 'reading a makes b the oldest');
    await cache.set('session:c', { c: 1 });
    assert.equal(cache.get('session:b'), undefined, 'b fell out');
    assert.deepEqual(cache.get('session:a'), { a: 1 });
    assert.deepEqual(cache.get('session:c'), { c: 1 });
    await cache.del('session:a');
    assert.equal(cache.get('session:a'), undefined);
  });
});
