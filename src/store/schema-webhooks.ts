// Table shapes of the outbox: webhooks (and the other destinations kept as webhook rows), events,
// deliveries and attempts, as both dialects store them; see schema.ts.
import type { ColumnType, Selectable } from 'kysely';

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
