import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { MessageReactionsTable, MessageRepliesTable, MessageRevisionsTable } from './schema-conversations.ts';
import type { MessageGroupsTable, NumberGroupsTable, SandboxGroupsTable } from './schema-groups.ts';
import type { ChatsTable, ContactsTable } from './schema-identities.ts';

/**
 * Table shapes as both dialects store them. Instants are epoch milliseconds and flags are 0/1
 * integers, so that a row reads the same from SQLite and PostgreSQL.
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

/** What a number last heard of a contact's presence (migration 0028); contact is a phone, or a LID while its phone is unknown. */
export interface ContactPresencesTable {
  number_id: string;
  contact: string;
  presence: string;
  group_id: string | null;
  last_seen_at: number | null;
  heard_at: number;
}

/** The ad an incoming message came from (migration 0023): the referral as JSON. */
export interface MessageReferralsTable {
  message_id: string;
  account_id: string;
  referral: string;
}

/** A poll's secret, which opens its votes (migration 0020). */
export interface PollSecretsTable {
  message_id: string;
  secret: string;
}

/** Each voter's current selection on a poll (migration 0020). */
export interface PollVotesTable {
  message_id: string;
  voter: string;
  voter_phone: string | null;
  voter_lid: string | null;
  options: string;
  voted_at: number;
}

export interface AccountsTable {
  id: string;
  name: string;
  plan: string;
  custom_monthly_limit: number | null;
  /** The account's default send policy; null inherits the gateway's (migration 0018). */
  send_policy: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  link_previews: Generated<number>;
}

export interface UsersTable {
  id: string;
  account_id: string | null;
  /** Stored lower-cased, which is what makes the unique index case-insensitive. */
  email: string;
  password_hash: string;
  role: string;
  is_operator: number;
  created_at: number;
}

export interface WhatsAppNumbersTable {
  id: string;
  account_id: string;
  holder_user_id: string | null;
  phone: string;
  engine: string;
  status: string;
  status_reason: string | null;
  /** Incoming messages are marked read as soon as they are stored (migration 0015). */
  auto_read: ColumnType<number, number | undefined, number>;
  /** Calls are rejected as they ring, and the caller is sent call_reply_text if set (migration 0022). */
  reject_calls: ColumnType<number, number | undefined, number>;
  call_reply_text: ColumnType<string | null, string | null | undefined, string | null>;
  /** The number shows itself online to its contacts (migration 0022). */
  show_online: ColumnType<number, number | undefined, number>;
  /** The number's send policy: a preset's name or a policy as JSON; null inherits (migration 0018). */
  send_policy: ColumnType<string | null, string | null | undefined, string | null>;
  /** The proxy's full URL, sealed (it may hold a password); null connects directly (migration 0043). */
  proxy_ciphertext: ColumnType<string | null, string | null | undefined, string | null>;
  /** The same URL with its credentials replaced by ***, for display. */
  proxy_redacted: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  updated_at: number;
}

/** A Cloud API number's ids at Meta and its sealed credentials (migration 0049 (0045 was reserved; 0048 landed first)). */
export interface CloudNumbersTable {
  number_id: string;
  phone_number_id: string;
  business_account_id: string;
  access_token_ciphertext: string;
  app_secret_ciphertext: string;
  verify_token_ciphertext: string;
  updated_at: number;
}

/** When each person last wrote to a number, which opens WhatsApp's 24-hour window (migration 0050 (0046 was reserved)). */
export interface CustomerWindowsTable {
  number_id: string;
  contact_phone: string;
  last_inbound_at: number;
  last_inbound_engine_id: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  hint: string;
  created_by_user_id: string | null;
  /** The creator's email when the key was made; kept after the creator is removed. */
  created_by_email: ColumnType<string | null, string | null | undefined, string | null>;
  /** The key's scopes, comma-separated; keys made before scopes have 'read,send'. */
  scopes: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface MessagesTable {
  id: string;
  account_id: string;
  number_id: string | null;
  direction: string;
  /** Null for an inbound message from a LID-addressed sender whose phone was not resolved. */
  from_phone: string | null;
  from_lid: string | null;
  to_phone: string;
  text: string;
  /** 'text', or the media kind whose caption `text` holds. */
  content_kind: string;
  status: string;
  engine_message_id: string | null;
  error_code: string | null;
  /** The file the message carries, with `text` as its caption; null for a text message. */
  media_id: string | null;
  /** A shared location or contact cards, as JSON; null otherwise. */
  structured: string | null;
  created_at: number;
  updated_at: number;
  /** When each status was reached (migration 0015); an incoming message's read_at is when we read it. */
  sent_at: OptionalInstant;
  delivered_at: OptionalInstant;
  read_at: OptionalInstant;
  failed_at: OptionalInstant;
  /** The latest edit, and the revocation; the replaced texts are in message_revisions. */
  edited_at: OptionalInstant;
  revoked_at: OptionalInstant;
  /** The send governor's queue (migration 0018): a waiting message has `scheduled_for`. */
  scheduled_for: OptionalInstant;
  expires_at: OptionalInstant;
  wait_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the governor let it go; the number's send history. */
  released_at: OptionalInstant;
  first_contact: ColumnType<number | null, number | null | undefined, number | null>;
  queued_options: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A nullable instant that inserts leave out: null until it happens. */
type OptionalInstant = ColumnType<number | null, number | null | undefined, number | null>;

/** An incoming file still to be fetched, after its first download failed (migration 0013). */
export interface MediaDownloadsTable {
  message_id: string;
  account_id: string;
  number_id: string;
  kind: string;
  file_name: string | null;
  /** The engine's description of the file, from which it can fetch it again (opaque here). */
  engine_token: string;
  /** Downloads tried so far, the first (with the message) included. */
  attempts: number;
  last_reason: string;
  next_attempt_at: number;
  created_at: number;
}

export interface MediaTable {
  id: string;
  account_id: string;
  kind: string;
  mime_type: string;
  size: number;
  /** Hex SHA-256 of the bytes; with account_id, the blob's key. */
  sha256: string;
  file_name: string | null;
  /** 'upload', 'send' (a send's url or data) or 'received'. */
  source: string;
  created_at: number;
  /** When retention ends; the sweep removes the bytes then. */
  expires_at: number;
  /** When the bytes were removed; the row stays, so messages still describe what they carried. */
  removed_at: number | null;
}

export interface MonthlyUsageTable {
  account_id: string;
  /** "YYYY-MM" in UTC. */
  period: string;
  used: number;
}

export type AccountRow = Selectable<AccountsTable>;
export type UserRow = Selectable<UsersTable>;
/**
 * A number as the rest of the store reads it; its send policy is read only where the governor
 * needs it, and its sealed proxy only where a session connects (findSealedProxy).
 */
export type NumberRow = Selectable<Omit<WhatsAppNumbersTable, 'send_policy' | 'proxy_ciphertext'>>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
/** The send governor's columns, which only its queue's repository reads and writes. */
type GovernorColumn = 'scheduled_for' | 'expires_at' | 'wait_reason' | 'released_at' | 'first_contact' | 'queued_options';
export type MessageRow = Selectable<Omit<MessagesTable, GovernorColumn>>;
export type NewMessageRow = Insertable<Omit<MessagesTable, GovernorColumn>>;

export interface WebhooksTable {
  id: string;
  account_id: string;
  url: string;
  /** Comma-separated event types. */
  event_types: string;
  enabled: number;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: number | null;
  disabled_reason: string | null;
  /** When the current run of consecutive failures began; null while healthy. */
  failing_since: number | null;
  /** Which chats' message events it receives: direct, group or all (migration 0016). */
  message_scope: ColumnType<string, string | undefined, string>;
  /** What it is for, as its maker said (migration 0029). */
  description: ColumnType<string | null, string | null | undefined, string | null>;
  /** A RabbitMQ sink's full broker URL, sealed: it holds the password (migration 0035). Null for HTTP. */
  target_ciphertext: ColumnType<string | null, string | null | undefined, string | null>;
  /** A RabbitMQ sink's exchange and routing-key template (migration 0035). Null for HTTP. */
  amqp_exchange: ColumnType<string | null, string | null | undefined, string | null>;
  amqp_routing_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** An event stream's connection holding it now, and how many events it has sent (migration 0041). Null for others. */
  stream_holder: ColumnType<string | null, string | null | undefined, string | null>;
  stream_sent: ColumnType<number | null, number | null | undefined, number | null>;
  /** A Chatwoot inbox's account and inbox ids, and its one number if it has one (migration 0042). Null otherwise. */
  chatwoot_account_id: ColumnType<number | null, number | null | undefined, number | null>;
  chatwoot_inbox_id: ColumnType<number | null, number | null | undefined, number | null>;
  chatwoot_number: ColumnType<string | null, string | null | undefined, string | null>;
  /** A Chatwoot inbox's callback token, sealed (migration 0048); null for other webhooks and for an inbox made before it, whose token is derived from its secret. */
  chatwoot_callback_token_ciphertext: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  updated_at: number;
}

/** Which Chatwoot contact and conversation stand for a person talking to a number, per inbox (migration 0042). */
export interface ChatwootConversationsTable {
  webhook_id: string;
  person_key: string;
  number_phone: string;
  person_phone: string | null;
  person_lid: string | null;
  contact_id: number;
  source_id: string;
  conversation_id: number;
  created_at: number;
}

/** Which Chatwoot message is which of ours, per inbox, both ways (migration 0042). */
export interface ChatwootMessagesTable {
  webhook_id: string;
  message_id: string;
  chatwoot_message_id: number;
  conversation_id: number;
  created_at: number;
}

/** Bearer tokens of the operator API, stored as their SHA-256 (migration 0031, docs/adr/0057-operator-api.md). */
export interface OperatorTokensTable {
  id: string;
  name: string;
  token_hash: string;
  hint: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** The audit log of management actions (migration 0030, docs/adr/0053-audit-log.md). */
export interface AuditEventsTable {
  id: string;
  at: number;
  account_id: string | null;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string | null;
  source_address: string | null;
  action: string;
  target_id: string | null;
  /** A small JSON object of facts, never a secret. */
  details: string | null;
}

export interface WebhookEventsTable {
  id: string;
  account_id: string;
  event_type: string;
  /** The event's JSON, without the per-webhook webhook_id that is added when it is sent. */
  payload: string;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  webhook_id: string;
  account_id: string;
  state: string;
  attempt_count: number;
  next_attempt_at: number;
  /** A lease: the worker that claimed it owns it until then; after, anyone may retry it. */
  claimed_until: number | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  /** A stream's delivery: its place in what the stream has sent; null until sent (migration 0041). */
  stream_position: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  webhook_id: string;
  attempted_at: number;
  duration_ms: number;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
}

export type WebhookRow = Selectable<WebhooksTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;

export interface DashboardSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  created_at: number;
  last_seen_at: number;
  ip: string | null;
  user_agent: string | null;
}

export interface SignInFailuresTable {
  /** A keyed digest of what is counted (an address, an email, or both): never the email itself. */
  throttle_key: string;
  failures: number;
  window_started_at: number;
  blocked_until: ColumnType<number, number | undefined, number>;
  previous_blocked_until: ColumnType<number, number | undefined, number>;
}

export interface UserInvitesTable {
  id: string;
  account_id: string;
  token_hash: string;
  role: string;
  created_by_user_id: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  accepted_user_id: string | null;
}

export type UserInviteRow = Selectable<UserInvitesTable>;

/** A Baileys session's creds, as BufferJSON sealed by the secret box. */
export interface BaileysAuthCredsTable {
  number_id: string;
  creds_ciphertext: string;
  updated_at: number;
}

/** One Signal key of a Baileys session: its category (pre-key, session, …), id and sealed value. */
export interface BaileysAuthKeysTable {
  number_id: string;
  category: string;
  key_id: string;
  value_ciphertext: string;
  updated_at: number;
}

/** An Idempotency-Key of the send API: claimed while its request runs, then its answer. */
export interface IdempotencyKeysTable {
  account_id: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the request's normalised content. */
  request_fingerprint: string;
  /** The id the claiming request gives its message; the row may not exist (yet). */
  message_id: string;
  /** 'in_flight' while a request holds the claim, 'completed' once its answer is stored. */
  state: string;
  response_status: number | null;
  /** The JSON body answered, replayed as is. */
  response_body: string | null;
  /** When the key was first claimed; the key expires 24 hours later. */
  created_at: number;
  /** When the current holder claimed it: an in-flight claim whose lease ran out is abandoned. */
  locked_at: number;
}

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

/** A gateway process that runs (or ran) sessions: one row per start, heartbeating while it lives. */
export interface ClusterNodesTable {
  /** Fresh for every start, so that a restarted process never inherits its predecessor's leases. */
  id: string;
  /** WAGW_NODE_NAME (the host name by default): what the operator calls the machine. */
  name: string;
  /** Where other nodes reach this one (WAGW_NODE_URL); null on a single node. */
  url: string | null;
  /**
   * 'server' for `wagw serve`, which takes a fair share of the numbers; 'command' for a CLI
   * command that holds a number only while it runs (linking), and is left out of the shares.
   */
  role: string;
  hostname: string;
  pid: number;
  started_at: number;
  heartbeat_at: number;
  /** Set by a clean stop; a node whose heartbeat stopped without it died. */
  stopped_at: number | null;
  /**
   * Until when every lease that names this node is live (the database's clock on PostgreSQL):
   * one renewal writes this row alone. Once it has passed, it is never moved forward again.
   */
  lease_expires_at: number;
}

/** Which node holds a number's session (live while that node's lease_expires_at is ahead) and the fencing epoch of that holding. */
export interface NumberLeasesTable {
  number_id: string;
  /** Null when released or never held. */
  node_id: string | null;
  /** Grows by one on every change of owner; owner-only writes carry it and a stale one is refused. */
  epoch: number;
  /** A node that asked for the number, to balance the load; the holder hands it over at its next tick. */
  wanted_by: string | null;
}

/** A change of a number's owner, for the Cluster page and `wagw cluster status`. */
export interface LeaseChangesTable {
  id: string;
  number_id: string;
  phone: string;
  from_node_id: string | null;
  to_node_id: string | null;
  epoch: number;
  /** 'claimed', 'taken_over' (the previous lease had expired), 'released' or 'handed_over'. */
  reason: string;
  at: number;
}

/** The last clear of a number's send queue (migration 0036, ADR 0066): what waited from before it is being cancelled. */
export interface QueueClearsTable {
  number_id: string;
  /** Every message of the number waiting with created_at at or before this is cancelled. */
  cleared_through: number;
}

/** A paused number's hold on its sends (migration 0019); no row means not paused. */
/** WhatsApp's new-chat cap of a number as last read, and its hold after a 475 (migration 0038, ADR 0058). */
export interface NewChatQuotasTable {
  number_id: string;
  status: string;
  total: number | null;
  used: number | null;
  cycle_started_at: number | null;
  cycle_ends_at: number | null;
  source: string;
  error: string | null;
  read_at: number;
  capped_until: number | null;
}

export interface NumberPausesTable {
  number_id: string;
  reason: string;
  detail: string | null;
  since_at: number;
  /** When it lifts by itself; null when that is not known. */
  until_at: number | null;
}
