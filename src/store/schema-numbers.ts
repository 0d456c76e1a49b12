// Table shapes of WhatsApp numbers and what their sessions keep: Baileys' auth state, Cloud API
// credentials, customer windows, pauses and the new-chat cap, as both dialects store them; see schema.ts.
import type { ColumnType, Selectable } from 'kysely';

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
  /**
   * When the status last changed; the settings' changes do not move it (migration 0055). Null
   * where a node older than the column wrote the row.
   */
  status_changed_at: number | null;
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

/** A paused number's hold on its sends (migration 0019); no row means not paused. */
export interface NumberPausesTable {
  number_id: string;
  reason: string;
  detail: string | null;
  since_at: number;
  /** When it lifts by itself; null when that is not known. */
  until_at: number | null;
}

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

/**
 * A number as the rest of the store reads it; its send policy is read only where the governor
 * needs it, and its sealed proxy only where a session connects (findSealedProxy).
 */
export type NumberRow = Selectable<Omit<WhatsAppNumbersTable, 'send_policy' | 'proxy_ciphertext'>>;
