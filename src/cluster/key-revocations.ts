import pg from 'pg';
import type { Logger } from 'pino';

import { CLUSTER_CHANNEL } from '../store/repositories/cluster-signals.ts';

export interface ClusterSignals {
  keyRevoked(keyId: string): void;
  /** Any other signal (the lookup caches' `lookups:…`), for whoever holds what it names. */
  other?(payload: string): void;
  /** The connection was lost for a while: anything may have been missed. */
  missedSignals(): void;
  leasesReleased(): void;
}

/**
 * On PostgreSQL, a revocation made on any node (or by the CLI) is announced with NOTIFY in the
 * revoking transaction, and every node LISTENs and drops the key from its cache, so the next
 * request is refused everywhere. A node whose listening connection broke drops its whole cache
 * once it is back, since it may have missed a revocation. SQLite has one node: nothing to do.
 */
export class KeyRevocationListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly connectionString: string | undefined,
    private readonly signals: ClusterSignals,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.connectionString === undefined) return;
    this.stopped = false;
    await this.listen().catch((error: unknown) => this.scheduleRetry(error));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.client
      ?.end()
      .catch((error: unknown) => this.logger.debug({ err: error }, 'the cluster notification channel did not close cleanly'));
    this.client = undefined;
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('error', (error) => this.scheduleRetry(error));
    client.on('notification', (notification) => {
      const payload = notification.payload ?? '';
      if (payload.startsWith('key:')) this.signals.keyRevoked(payload.slice(4));
      else if (payload === 'leases') this.signals.leasesReleased();
      else this.signals.other?.(payload);
    });
    await client.connect();
    await client.query(`listen ${CLUSTER_CHANNEL}`);
    this.client = client;
  }

  private scheduleRetry(error: unknown): void {
    if (this.stopped || this.retry !== undefined) return;
    this.logger.warn({ err: error }, 'lost the cluster notification channel; forgetting cached keys and listening again');
    void this.client
      ?.end()
      .catch((error: unknown) => this.logger.debug({ err: error }, 'the broken cluster notification channel did not close cleanly'));
    this.client = undefined;
    this.signals.missedSignals();
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.listen().then(
        () => this.signals.missedSignals(),
        (retryError: unknown) => this.scheduleRetry(retryError),
      );
    }, 1_000);
    this.retry.unref();
  }
}
