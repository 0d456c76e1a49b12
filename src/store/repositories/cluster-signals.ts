import { sql } from 'kysely';
import type { Executor } from '../database.ts';

/** The PostgreSQL channel nodes signal each other on (cluster/key-revocations.ts listens). */
export const CLUSTER_CHANNEL = 'wagw_cluster';

/**
 * Tells every node, once the surrounding transaction commits, that something changed which they
 * hold in memory: `key:<id>` for a revoked API key, `leases` for released leases. PostgreSQL
 * delivers a NOTIFY only on commit, so no node hears of a change that was rolled back. On SQLite
 * there is one node, which already knows.
 */
export async function signalNodes(db: Executor, dialect: 'sqlite' | 'postgres', payload: string): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_notify(${CLUSTER_CHANNEL}, ${payload})`.execute(db);
}
