import { describeDatabase, type Config } from '../config.ts';
import type { Store } from '../store/database.ts';
import { countPendingDeliveries } from '../store/repositories/deliveries.ts';
import { countRows } from '../store/repositories/system.ts';

export interface SystemStatus {
  version: string;
  startedAt: Date;
  uptimeMs: number;
  databaseKind: 'sqlite' | 'postgres';
  /** The database URL with any password masked. */
  database: string;
  counts: {
    accounts: number;
    users: number;
    numbers: number;
    apiKeys: number;
    messages: number;
    webhooks: number;
    pendingDeliveries: number;
  };
}

/** What the operator's system page reports about this gateway. */
export class SystemStatusService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly startedAt: Date,
  ) {}

  async status(now = new Date()): Promise<SystemStatus> {
    const db = this.store.db;
    const [accounts, users, numbers, apiKeys, messages, webhooks, pendingDeliveries] = await Promise.all([
      countRows(db, 'accounts'),
      countRows(db, 'users'),
      countRows(db, 'whatsapp_numbers'),
      countRows(db, 'api_keys'),
      countRows(db, 'messages'),
      countRows(db, 'webhooks'),
      countPendingDeliveries(db),
    ]);
    return {
      version: this.config.version,
      startedAt: this.startedAt,
      uptimeMs: now.getTime() - this.startedAt.getTime(),
      databaseKind: this.config.database.dialect,
      database: describeDatabase(this.config.database),
      counts: { accounts, users, numbers, apiKeys, messages, webhooks, pendingDeliveries },
    };
  }
}
