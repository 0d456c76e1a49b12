import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './schema.ts';
import * as core from './migrations/0001-core.ts';
import * as webhooks from './migrations/0002-webhooks.ts';
import * as dashboard from './migrations/0003-dashboard.ts';
import * as baileysAuth from './migrations/0004-baileys-auth.ts';
import * as messageSenders from './migrations/0005-message-senders.ts';
import * as idempotencyKeys from './migrations/0006-idempotency-keys.ts';
import * as deliveryClaimIndex from './migrations/0007-delivery-claim-index.ts';
import * as signInDelays from './migrations/0008-sign-in-delays.ts';
import * as keyAttribution from './migrations/0009-key-attribution.ts';
import * as cluster from './migrations/0010-cluster.ts';
import * as media from './migrations/0011-media.ts';
import * as structuredContent from './migrations/0012-structured-content.ts';
import * as mediaDownloads from './migrations/0013-media-downloads.ts';
import * as messageReadIndexes from './migrations/0014-message-read-indexes.ts';
import * as conversations from './migrations/0015-conversations.ts';
import * as groups from './migrations/0016-groups.ts';
import * as sandboxGroups from './migrations/0017-sandbox-groups.ts';
import * as numberPauses from './migrations/0019-number-pauses.ts';
import * as richContent from './migrations/0020-rich-content.ts';
import * as identitiesAndChats from './migrations/0021-identities-and-chats.ts';
import * as numberCallsPresence from './migrations/0022-number-calls-presence.ts';
import * as messageReferrals from './migrations/0023-message-referrals.ts';
import * as nodeLeases from './migrations/0025-node-leases.ts';
import * as contactPresences from './migrations/0028-contact-presences.ts';
import * as sendGovernor from './migrations/0018-send-governor.ts';
import * as apiKeyScopes from './migrations/0024-api-key-scopes.ts';
import * as webhookDescriptions from './migrations/0029-webhook-descriptions.ts';
import * as auditLog from './migrations/0030-audit-log.ts';
import * as operatorTokens from './migrations/0031-operator-tokens.ts';
import * as rabbitmqSinks from './migrations/0035-rabbitmq-sinks.ts';
import * as queueClears from './migrations/0036-queue-clears.ts';
import * as newChatQuotas from './migrations/0038-new-chat-quotas.ts';
import * as eventStreams from './migrations/0041-event-streams.ts';
import * as chatwootInboxes from './migrations/0042-chatwoot-inboxes.ts';
import * as numberProxies from './migrations/0043-number-proxies.ts';
import * as chatwootCallbackTokens from './migrations/0048-chatwoot-callback-tokens.ts';
import * as cloudNumbers from './migrations/0049-cloud-numbers.ts';
import * as customerWindows from './migrations/0050-customer-windows.ts';
import * as numberStatusSince from './migrations/0055-number-status-since.ts';

// Migrations are listed here rather than read from a folder, so that they work the same from
// source, from a bundle and from the CLI, whatever the working directory.
const migrations: Record<string, Migration> = {
  '0001-core': core,
  '0002-webhooks': webhooks,
  '0003-dashboard': dashboard,
  '0004-baileys-auth': baileysAuth,
  '0005-message-senders': messageSenders,
  '0006-idempotency-keys': idempotencyKeys,
  '0007-delivery-claim-index': deliveryClaimIndex,
  '0008-sign-in-delays': signInDelays,
  '0009-key-attribution': keyAttribution,
  '0010-cluster': cluster,
  '0011-media': media,
  '0012-structured-content': structuredContent,
  '0013-media-downloads': mediaDownloads,
  '0014-message-read-indexes': messageReadIndexes,
  '0015-conversations': conversations,
  '0016-groups': groups,
  '0017-sandbox-groups': sandboxGroups,
  '0018-send-governor': sendGovernor,
  '0019-number-pauses': numberPauses,
  '0020-rich-content': richContent,
  '0021-identities-and-chats': identitiesAndChats,
  '0022-number-calls-presence': numberCallsPresence,
  '0023-message-referrals': messageReferrals,
  '0024-api-key-scopes': apiKeyScopes,
  '0025-node-leases': nodeLeases,
  '0028-contact-presences': contactPresences,
  '0029-webhook-descriptions': webhookDescriptions,
  '0030-audit-log': auditLog,
  '0031-operator-tokens': operatorTokens,
  '0035-rabbitmq-sinks': rabbitmqSinks,
  '0036-queue-clears': queueClears,
  '0038-new-chat-quotas': newChatQuotas,
  '0041-event-streams': eventStreams,
  '0042-chatwoot-inboxes': chatwootInboxes,
  '0043-number-proxies': numberProxies,
  '0048-chatwoot-callback-tokens': chatwootCallbackTokens,
  '0049-cloud-numbers': cloudNumbers,
  '0050-customer-windows': customerWindows,
  '0055-number-status-since': numberStatusSince,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Any fixed number of our own; PostgreSQL's advisory locks are named by a bigint. */
const MIGRATION_ADVISORY_LOCK = 0x7761_6777_6d69_67n; // "wagwmig"

/**
 * Brings the schema to the latest version. Every entry point calls this on start, so a server,
 * a CLI and nodes started together may well do it at the same moment. On PostgreSQL the whole
 * run holds an advisory lock of ours: Kysely's migrator locks only around applying migrations,
 * after creating its own tables, and that is its detail to change. On SQLite the whole
 * migration runs under BEGIN IMMEDIATE, SQLite's write lock. Either way a second process waits
 * and then finds the work done instead of racing it.
 */
export async function migrateToLatest(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  if (dialect === 'postgres') {
    return db.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(${sql.lit(MIGRATION_ADVISORY_LOCK)})`.execute(connection);
      try {
        return await runMigrator(connection);
      } finally {
        await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_ADVISORY_LOCK)})`.execute(connection);
      }
    });
  }
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await runMigrator(connection);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

async function runMigrator(db: Kysely<Database>): Promise<string[]> {
  // Migration numbers are handed out to work done side by side, so one may land after a higher
  // one was applied (0028 after 0029 and 0030): each is independent of the others' tables, and
  // a database that ran the higher ones runs the newcomer rather than refusing to start.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
