import type { Insertable, Selectable } from 'kysely';

/**
 * Table shapes as both dialects store them. Instants are epoch milliseconds and flags are 0/1
 * integers, so that a row reads the same from SQLite and PostgreSQL.
 */
export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  whatsapp_numbers: WhatsAppNumbersTable;
  api_keys: ApiKeysTable;
  messages: MessagesTable;
  monthly_usage: MonthlyUsageTable;
}

export interface AccountsTable {
  id: string;
  name: string;
  plan: string;
  custom_monthly_limit: number | null;
  created_at: number;
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
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  hint: string;
  created_by_user_id: string | null;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface MessagesTable {
  id: string;
  account_id: string;
  number_id: string | null;
  direction: string;
  from_phone: string;
  to_phone: string;
  text: string;
  status: string;
  engine_message_id: string | null;
  error_code: string | null;
  created_at: number;
  updated_at: number;
}

export interface MonthlyUsageTable {
  account_id: string;
  /** "YYYY-MM" in UTC. */
  period: string;
  used: number;
}

export type AccountRow = Selectable<AccountsTable>;
export type UserRow = Selectable<UsersTable>;
export type NumberRow = Selectable<WhatsAppNumbersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type MessageRow = Selectable<MessagesTable>;
export type NewMessageRow = Insertable<MessagesTable>;
