import {
  BufferJSON,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type CacheStore,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from 'baileys';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { SecretBox } from '../../secrets/secret-box.ts';
import type { Transaction } from 'kysely';
import type { SessionLease } from '../../domain/model.ts';
import type { Store } from '../../store/database.ts';
import type { Database } from '../../store/schema.ts';
import { assertLeaseHeld } from '../../store/repositories/leases.ts';
import {
  deleteAuthState,
  readCreds,
  readKeys,
  writeCreds,
  writeKeys,
  type AuthKeyAddress,
  type SealedAuthKey,
} from '../../store/repositories/baileys-auth.ts';
import { handledElsewhere } from '../../domain/promises.ts';

export interface DatabaseAuthState {
  /** What `makeWASocket` takes as `auth`; wrap `state.keys` with {@link cachedKeys} first. */
  state: AuthenticationState;
  /** Stores the current creds; call it on every `creds.update`. Resolves once durable. */
  saveCreds(): Promise<void>;
  /** Forgets the session (creds and keys), as after a logout. The state is unusable afterwards. */
  clear(): Promise<void>;
}

type KeyCategory = keyof SignalDataTypeMap;

/**
 * A Baileys auth state kept in the database, sealed with the secret box, so that a copied
 * database or backup does not hand out the WhatsApp session. Without stored creds it starts a
 * fresh identity, which is what linking a number needs.
 */
export async function createDatabaseAuthState(
  store: Store,
  secretBox: SecretBox,
  lease: SessionLease,
  logger: Logger,
): Promise<DatabaseAuthState> {
  const { numberId } = lease;
  // Every write is fenced by the node's lease: a node that lost the number (paused past its
  // lease, say) cannot overwrite the Signal keys the new owner is ratcheting.
  const fenced = (work: (trx: Transaction<Database>) => Promise<void>) =>
    store.db.transaction().execute(async (trx) => {
      await assertLeaseHeld(trx, store.dialect, lease);
      await work(trx);
    });
  const creds = await loadCreds(store, secretBox, numberId);
  const seal = (value: unknown): string => secretBox.seal(JSON.stringify(value, BufferJSON.replacer));
  // Once cleared, late writes from a socket that is still closing must not bring the session back.
  let cleared = false;
  // Writes run one after another, each serializing when it starts, so an older snapshot of the
  // creds never commits after a newer one, and nothing written after clear() outlives it.
  let writes: Promise<void> = Promise.resolve();
  const inTurn = (work: () => Promise<void>): Promise<void> => {
    const run = writes.then(work, work);
    // The caller gets `run` and its failure; the queue only waits for it to settle.
    writes = run.then(handledElsewhere, handledElsewhere);
    return run;
  };

  const keys: SignalKeyStore = {
    async get<T extends KeyCategory>(category: T, keyIds: string[]) {
      const sealed = await readKeys(store.db, numberId, category, keyIds);
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const [keyId, ciphertext] of sealed) {
        const value = openKey(secretBox, ciphertext, category, keyId, logger);
        if (value !== undefined) found[keyId] = value as SignalDataTypeMap[T];
      }
      return found;
    },
    set: (data: SignalDataSet) =>
      inTurn(async () => {
        if (cleared) return;
        const { upserts, deletions } = sealChanges(data, seal);
        if (upserts.length === 0 && deletions.length === 0) return;
        // Commit is durable here (the log synced before the commit returns on SQLite, ADR 0037;
        // synchronous_commit on PostgreSQL),
        // so a pre-key Baileys has used or a session it has ratcheted stays so after a crash.
        await fenced((trx) => writeKeys(trx, numberId, upserts, deletions, new Date()));
      }),
  };

  return {
    state: { creds, keys },
    saveCreds: () =>
      inTurn(async () => {
        if (!cleared) await fenced((trx) => writeCreds(trx, numberId, seal(creds), new Date()));
      }),
    clear: () =>
      inTurn(async () => {
        cleared = true;
        await fenced((trx) => deleteAuthState(trx, numberId));
      }),
  };
}

/** True when the number completed pairing once and its creds are stored: it can reconnect by itself. */
export async function isLinked(store: Store, secretBox: SecretBox, numberId: string): Promise<boolean> {
  if ((await readCreds(store.db, numberId)) === undefined) return false;
  return (await loadCreds(store, secretBox, numberId)).me !== undefined;
}

async function loadCreds(store: Store, secretBox: SecretBox, numberId: string): Promise<AuthenticationCreds> {
  const sealed = await readCreds(store.db, numberId);
  if (sealed === undefined) return initAuthCreds();
  let text: string;
  try {
    text = secretBox.open(sealed);
  } catch (error) {
    // Starting afresh here would silently unlink the number; the operator must fix the key instead.
    throw new Error(`The stored WhatsApp session of ${numberId} cannot be opened: was the secret key changed?`, { cause: error });
  }
  return JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds;
}

/**
 * The key store the socket should use: Baileys' cache in front of the database, so that the
 * hot keys (sessions, sender keys) are not read back from the database for every message.
 */
export function cachedKeys(keys: SignalKeyStore, logger: Logger): SignalKeyStore {
  return makeCacheableSignalKeyStore(keys, logger, boundedKeyCache(KEY_CACHE_ENTRIES, KEY_CACHE_TTL_MS));
}

// Baileys' own cache has a time limit but no size limit; a number talking to many contacts would
// grow it without end. The bound keeps memory flat; a key that falls out is read from the database.
const KEY_CACHE_ENTRIES = 5_000;
const KEY_CACHE_TTL_MS = 5 * 60_000;

/** A size- and time-bounded cache in the shape Baileys' key store takes. */
export function boundedKeyCache(maxEntries: number, ttlMs: number): CacheStore {
  const cache = new LRUCache<string, object>({ max: maxEntries, ttl: ttlMs });
  return {
    get: <T>(key: string) => cache.get(key) as T | undefined,
    set: (key: string, value: unknown) => {
      // Baileys caches only objects and buffers; anything else is simply not cached.
      if (typeof value === 'object' && value !== null) cache.set(key, value);
    },
    del: (key: string) => cache.delete(key),
    flushAll: () => cache.clear(),
  };
}

function sealChanges(data: SignalDataSet, seal: (value: unknown) => string): { upserts: SealedAuthKey[]; deletions: AuthKeyAddress[] } {
  const upserts: SealedAuthKey[] = [];
  const deletions: AuthKeyAddress[] = [];
  for (const [category, values] of Object.entries(data)) {
    for (const [keyId, value] of Object.entries(values ?? {})) {
      if (value === null || value === undefined) deletions.push({ category, keyId });
      else upserts.push({ category, keyId, valueCiphertext: seal(value) });
    }
  }
  return { upserts, deletions };
}

/**
 * A key that cannot be opened (tampered with, or sealed under another secret key) is treated as
 * missing and logged: Baileys recovers from a missing key by building a new session, whereas an
 * error would fail every message from that contact.
 */
function openKey(secretBox: SecretBox, ciphertext: string, category: KeyCategory, keyId: string, logger: Logger): unknown {
  let value: unknown;
  try {
    value = JSON.parse(secretBox.open(ciphertext), BufferJSON.reviver);
  } catch (error) {
    logger.error({ err: error, category, keyId }, 'A stored WhatsApp key could not be opened; treating it as missing.');
    return undefined;
  }
  // Baileys expects the protobuf class here, as its own file store gives it.
  if (category === 'app-state-sync-key') return proto.Message.AppStateSyncKeyData.fromObject(value as object);
  return value;
}
