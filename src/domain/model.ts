import type { E164 } from './phone.ts';
import type { PlanName } from './plans.ts';

export type EngineKind = 'sandbox' | 'baileys';
export const engineKinds: readonly EngineKind[] = ['sandbox', 'baileys'];

export type SessionStatus =
  | 'connected'
  | 'connecting'
  | 'disconnected'
  | 'logged_out'
  | 'link_expired'
  | 'conflict'
  | 'failed';
export const sessionStatuses: readonly SessionStatus[] = [
  'connected',
  'connecting',
  'disconnected',
  'logged_out',
  'link_expired',
  'conflict',
  'failed',
];

export type UserRole = 'owner' | 'admin' | 'member';
export const userRoles: readonly UserRole[] = ['owner', 'admin', 'member'];

export type MessageDirection = 'outbound' | 'inbound';
export type MessageStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

export interface Account {
  id: string;
  name: string;
  plan: PlanName;
  customMonthlyLimit: number | null;
  createdAt: Date;
}

export interface User {
  id: string;
  accountId: string | null;
  email: string;
  role: UserRole;
  isOperator: boolean;
  createdAt: Date;
}

export interface WhatsAppNumber {
  id: string;
  accountId: string;
  holderUserId: string | null;
  phone: E164;
  engine: EngineKind;
  status: SessionStatus;
  /** Why the status is what it is, when there is more to say (e.g. "set by the operator"). */
  statusReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  hint: string;
  createdByUserId: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface Message {
  id: string;
  accountId: string;
  /** Null once the number has been removed; the history stays with the account. */
  numberId: string | null;
  direction: MessageDirection;
  fromPhone: E164;
  toPhone: E164;
  text: string;
  status: MessageStatus;
  engineMessageId: string | null;
  createdAt: Date;
}
