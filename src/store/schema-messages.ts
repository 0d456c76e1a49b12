// Table shapes of messages and the send queue: the message row with its governor columns, a
// queue's last clear, ad referrals, polls and Idempotency-Keys, as both dialects store them; see schema.ts.
import type { ColumnType, Insertable, Selectable } from 'kysely';

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

/** The send governor's columns, which only its queue's repository reads and writes. */
type GovernorColumn = 'scheduled_for' | 'expires_at' | 'wait_reason' | 'released_at' | 'first_contact' | 'queued_options';
export type MessageRow = Selectable<Omit<MessagesTable, GovernorColumn>>;
export type NewMessageRow = Insertable<Omit<MessagesTable, GovernorColumn>>;

/** The last clear of a number's send queue (migration 0036, ADR 0066): what waited from before it is being cancelled. */
export interface QueueClearsTable {
  number_id: string;
  /** Every message of the number waiting with created_at at or before this is cancelled. */
  cleared_through: number;
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
