import type {
  AccountsTable,
  ApiKeysTable,
  AuditEventsTable,
  DashboardSessionsTable,
  MonthlyUsageTable,
  OperatorTokensTable,
  SignInFailuresTable,
  UserInvitesTable,
  UsersTable,
} from './schema-accounts.ts';
import type { ClusterNodesTable, LeaseChangesTable, NumberLeasesTable } from './schema-cluster.ts';
import type { MessageReactionsTable, MessageRepliesTable, MessageRevisionsTable } from './schema-conversations.ts';
import type { MessageGroupsTable, NumberGroupsTable, SandboxGroupsTable } from './schema-groups.ts';
import type { ChatsTable, ContactPresencesTable, ContactsTable } from './schema-identities.ts';
import type { ChatwootConversationsTable, ChatwootMessagesTable } from './schema-integrations.ts';
import type { MediaDownloadsTable, MediaTable } from './schema-media.ts';
import type {
  IdempotencyKeysTable,
  MessageReferralsTable,
  MessagesTable,
  PollSecretsTable,
  PollVotesTable,
  QueueClearsTable,
} from './schema-messages.ts';
import type {
  BaileysAuthCredsTable,
  BaileysAuthKeysTable,
  CloudNumbersTable,
  CustomerWindowsTable,
  NewChatQuotasTable,
  NumberPausesTable,
  WhatsAppNumbersTable,
} from './schema-numbers.ts';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEventsTable, WebhooksTable } from './schema-webhooks.ts';

/**
 * Table shapes as both dialects store them. Instants are epoch milliseconds and flags are 0/1
 * integers, so that a row reads the same from SQLite and PostgreSQL.
 *
 * Each group of tables is declared in its own schema-*.ts, beside the rows its repositories
 * read; this file only composes them into the one interface Kysely is typed with.
 */
export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  whatsapp_numbers: WhatsAppNumbersTable;
  cloud_numbers: CloudNumbersTable;
  customer_windows: CustomerWindowsTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  operator_tokens: OperatorTokensTable;
  messages: MessagesTable;
  monthly_usage: MonthlyUsageTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  dashboard_sessions: DashboardSessionsTable;
  sign_in_failures: SignInFailuresTable;
  user_invites: UserInvitesTable;
  baileys_auth_creds: BaileysAuthCredsTable;
  baileys_auth_keys: BaileysAuthKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  cluster_nodes: ClusterNodesTable;
  number_leases: NumberLeasesTable;
  lease_changes: LeaseChangesTable;
  media: MediaTable;
  media_downloads: MediaDownloadsTable;
  message_replies: MessageRepliesTable;
  message_reactions: MessageReactionsTable;
  message_revisions: MessageRevisionsTable;
  message_groups: MessageGroupsTable;
  message_referrals: MessageReferralsTable;
  number_groups: NumberGroupsTable;
  sandbox_groups: SandboxGroupsTable;
  number_pauses: NumberPausesTable;
  new_chat_quotas: NewChatQuotasTable;
  queue_clears: QueueClearsTable;
  chatwoot_conversations: ChatwootConversationsTable;
  chatwoot_messages: ChatwootMessagesTable;
  contacts: ContactsTable;
  chats: ChatsTable;
  poll_secrets: PollSecretsTable;
  poll_votes: PollVotesTable;
  contact_presences: ContactPresencesTable;
}
