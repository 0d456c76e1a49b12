import type { AuditActor } from '../../domain/audit.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import type { ChatReplies, ChatReply, SentReply } from '../../ports/chat-replies.ts';
import type { OwnerDispatch } from './owner-dispatch.ts';
import { sendMessage } from './send-message.ts';

/** The dashboard's replies as sends of POST /send_message, run on the number's owner (ADR 0073). */
export class DispatchedChatReplies implements ChatReplies {
  constructor(private readonly dispatch: Pick<OwnerDispatch, 'call'>) {}

  async send(scope: AccountScope, actor: AuditActor, reply: ChatReply): Promise<SentReply> {
    const answer = (await this.dispatch.call(sendMessage, {
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
    })) as { message_id: string; status?: string };
    return { messageId: answer.message_id, status: answer.status ?? 'sent' };
  }
}
