import type { AuditActor, AuditDetails } from '../../domain/audit.ts';
import { recordAudit } from '../../audit/audit-trail.ts';
import type { Executor } from '../../store/database.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import type { ChatReplies, ChatReply, SentReply } from '../../ports/chat-replies.ts';
import type { OwnerDispatch } from './owner-dispatch.ts';
import { sendMessage } from './send-message.ts';

/**
 * The dashboard's replies as sends of POST /send_message, run on the number's owner (ADR 0073).
 * A reply is a person acting through the gateway (a dashboard user, a Chatwoot agent), so each
 * one sent is an audit row naming them (`message.replied`), which an API client's send is not:
 * its key is its own record, and its messages are the account's history.
 */
export class DispatchedChatReplies implements ChatReplies {
  constructor(
    private readonly dispatch: Pick<OwnerDispatch, 'callReplayable'>,
    private readonly auditDb: Executor,
  ) {}

  async send(scope: AccountScope, actor: AuditActor, reply: ChatReply): Promise<SentReply> {
    const { body, replayed } = await this.dispatch.callReplayable(sendMessage, {
      scope,
      actor,
      params: {},
      query: {},
      body: {
        from_phone: reply.fromPhone,
        ...('phone' in reply.to ? { to_phone: reply.to.phone } : { to_group: reply.to.group }),
        message: reply.text,
      },
      idempotencyKey: reply.idempotencyKey,
    });
    const answer = body as { message_id: string; status?: string };
    const status = answer.status ?? 'sent';
    await reply.onSent?.(answer.message_id);
    // A replay (the same reply sent again: a double click, Chatwoot's repeated call) sent nothing new.
    if (replayed) return { messageId: answer.message_id, status };
    const to: AuditDetails = 'phone' in reply.to ? { to_phone: reply.to.phone } : { to_group: reply.to.group };
    await recordAudit(this.auditDb, actor, 'message.replied', {
      accountId: scope.accountId,
      targetId: answer.message_id,
      details: { from_phone: reply.fromPhone, ...to, status, ...reply.audited },
    });
    return { messageId: answer.message_id, status };
  }
}
