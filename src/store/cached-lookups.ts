import type { Kysely } from 'kysely';
import { LazyLru } from '../domain/lazy-lru.ts';
import type { E164 } from '../domain/phone.ts';
import type { Executor } from './database.ts';
import { signalNodes } from './repositories/cluster-signals.ts';
import { findNumberWithPlanByPhone, type NumberWithPlan } from './repositories/numbers.ts';
import { listEnabledWebhooks, type EnabledWebhook } from './repositories/webhooks.ts';
import type { Database } from './schema.ts';

/** How long a looked-up row is trusted without reading it again; the API-key cache's bound (docs/adr/0004). */
export const LOOKUP_TTL_MS = 2_000;
const LOOKUP_ENTRIES = 10_000;

/** The cluster signals that tell every node to forget what it holds (cluster/key-revocations.ts listens). */
const NUMBERS_CHANGED_SIGNAL = 'lookups:numbers';
const WEBHOOKS_CHANGED_SIGNAL_PREFIX = 'lookups:webhooks:';

/**
 * The two reads every message makes, held in memory for LOOKUP_TTL_MS: a number with its
 * account's plan (each send and each incoming message), and an account's enabled webhooks (each
 * event). A change made in this process forgets the entries at once, after its commit; one made
 * on another node reaches this one by NOTIFY on PostgreSQL, and anything else (a CLI on SQLite,
 * a lost notification channel) within the bound. Only rows found are kept, and a read that raced
 * a change is used for its own caller but not kept, as the key cache does.
 */
export class CachedLookups {
  private readonly numbers = new LazyLru<string, NumberWithPlan>({ max: LOOKUP_ENTRIES, ttl: LOOKUP_TTL_MS });
  private readonly webhooks = new LazyLru<string, EnabledWebhook[]>({ max: LOOKUP_ENTRIES, ttl: LOOKUP_TTL_MS });
  private numberChanges = 0;
  private webhookChanges = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** The number that has `phone`, with its account's plan; its fields and plan may be LOOKUP_TTL_MS old. */
  async numberWithPlan(phone: E164): Promise<NumberWithPlan | undefined> {
    const cached = this.numbers.get(phone);
    if (cached !== undefined) return cached;
    const changesBefore = this.numberChanges;
    const found = await findNumberWithPlanByPhone(this.db, phone);
    if (found !== undefined && changesBefore === this.numberChanges) this.numbers.set(phone, found);
    return found;
  }

  /** The account's enabled webhooks, read through `db` (the caller's transaction) when not held. */
  async enabledWebhooks(db: Executor, accountId: string): Promise<readonly EnabledWebhook[]> {
    const cached = this.webhooks.get(accountId);
    if (cached !== undefined) return cached;
    const changesBefore = this.webhookChanges;
    const found = await listEnabledWebhooks(db, accountId);
    if (changesBefore === this.webhookChanges) this.webhooks.set(accountId, found);
    return found;
  }

  /** After a committed change to any number or account plan: forget them here, and tell the other nodes. */
  async numbersChanged(): Promise<void> {
    this.forgetNumbers();
    await signalNodes(this.db, this.dialect, NUMBERS_CHANGED_SIGNAL);
  }

  /** After a committed change to the account's webhooks: forget them here, and tell the other nodes. */
  async webhooksChanged(accountId: string): Promise<void> {
    this.forgetWebhooks(accountId);
    await signalNodes(this.db, this.dialect, `${WEBHOOKS_CHANGED_SIGNAL_PREFIX}${accountId}`);
  }

  forgetNumbers(): void {
    this.numberChanges += 1;
    this.numbers.clear();
  }

  forgetWebhooks(accountId: string): void {
    this.webhookChanges += 1;
    this.webhooks.delete(accountId);
  }

  private forgetEveryAccountsWebhooks(): void {
    this.webhookChanges += 1;
    this.webhooks.clear();
  }

  /** After missed cluster signals nothing held can be trusted. */
  forgetAll(): void {
    this.forgetNumbers();
    this.forgetEveryAccountsWebhooks();
  }

  /** Handles one cluster signal; false when it is not about lookups. */
  heard(payload: string): boolean {
    if (payload === NUMBERS_CHANGED_SIGNAL) this.forgetNumbers();
    else if (payload.startsWith(WEBHOOKS_CHANGED_SIGNAL_PREFIX)) this.forgetWebhooks(payload.slice(WEBHOOKS_CHANGED_SIGNAL_PREFIX.length));
    else return false;
    return true;
  }
}
