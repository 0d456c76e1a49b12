// Table shapes of groups (migrations 0016 and 0017): the group chat a message belongs to, the
// groups each number sees, and the simulated network's groups, as both dialects store them; see schema.ts.

/** The group chat a message belongs to, with the group's subject when the message was stored (migration 0016). */
export interface MessageGroupsTable {
  message_id: string;
  account_id: string;
  group_id: string;
  group_subject: string;
  /** JSON array of the members mentioned; null when none. */
  mentions: string | null;
}

/** A group as one of our numbers last saw it; is_member is 0 once the number left or was removed. */
export interface NumberGroupsTable {
  number_id: string;
  account_id: string;
  group_id: string;
  subject: string;
  size: number;
  is_admin: number;
  is_member: number;
  updated_at: number;
}

/** A group of the simulated network, whole: its members are JSON [phone, role] pairs. */
export interface SandboxGroupsTable {
  group_id: string;
  subject: string;
  description: string | null;
  invite_code: string;
  members: string;
  updated_at: number;
}
