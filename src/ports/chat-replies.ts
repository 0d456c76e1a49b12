import type { AuditActor } from '../domain/audit.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';

/** A reply typed in the dashboard's conversation view: a text to a person or a group. */
export interface ChatReply {
  fromPhone: string;
  /** The person (a phone, or a LID the map knows a phone for), or else the group. */
  to: { phone: string } | { group: string };
  text: string;
  /**
   * One key per typed reply (the form's own), so that a form sent twice (a double click, a
   * reload of the POST) sends once, as an API client's retry with the same key does.
   */
  idempotencyKey: string;
  /** What the reply's audit row adds of where it came from (a Chatwoot message's ids, say). */
  audited?: Readonly<Record<string, string | number>>;
  /** The caller's own record of the sent reply (Chatwoot's link), made before its audit row. */
  onSent?: (messageId: string) => Promise<void>;
}

/** The send's answer: the message and where it is (`queued` when the governor made it wait, else `sent`). */
export interface SentReply {
  messageId: string;
  status: string;
}

/**
 * Sends the dashboard's replies through the public send operation itself (POST /send_message),
 * on the number's owner wherever it runs: the governor, the quotas, idempotency and every check
 * apply as to an API client (src/http/operations/chat-replies.ts, ADR 0073). A refusal is thrown
 * as the error it was, with its code.
 */
export interface ChatReplies {
  send(scope: AccountScope, actor: AuditActor, reply: ChatReply): Promise<SentReply>;
}
