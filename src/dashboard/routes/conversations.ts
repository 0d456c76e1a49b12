import type { FastifyInstance } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, canManage, pageContext, requireAccountMember, requireManager, sendPage, userActor, viewerOf } from '../context.ts';
import { attempt, formText, queryText } from '../forms.ts';
import { newReplyKey, presentChats, presentConversation, presentReplyTarget, presentThread } from '../presenters/conversations.ts';
import { ChatsPage, ConversationPage, Thread } from '../views/conversations-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'chatReplies' | 'chats' | 'history' | 'numbers' | 'polls'>;

type ChatParams = { Params: { numberId: string; chat: string } };

/** The reply form's key, as the page minted it; anything else is replaced (it only guards a double send). */
const REPLY_KEY = /^dashboard:[0-9a-f-]{36}$/;

/**
 * `/conversations`: the account's chats and each chat's thread, with a reply box for owners and
 * admins (ADR 0073). The path is not `/chats`, which is the API's list of one number's chats.
 */
export function registerConversationRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/conversations', { preHandler: requireAccountMember }, async (request, reply) => {
    const view = await presentChats(gateway, accountOf(request), queryText(request.query, 'q') ?? '');
    return sendPage(reply, ChatsPage({ context: pageContext(request, reply, 'Chats', 'chats'), view }));
  });

  app.get<ChatParams>('/conversations/:numberId/:chat', { preHandler: requireAccountMember }, async (request, reply) => {
    const { numberId, chat } = request.params;
    const view = await presentConversation(gateway, accountOf(request), numberId, chat, canManage(viewerOf(request)));
    return sendPage(reply, ConversationPage({ context: pageContext(request, reply, view.title, 'chats'), view }));
  });

  // Polled by the open thread (app.js): it must not count as activity, or an open tab would never go idle.
  app.get<ChatParams>(
    '/conversations/:numberId/:chat/thread',
    { preHandler: requireAccountMember, config: { passiveSession: true } },
    async (request, reply) => {
      const { numberId, chat } = request.params;
      const thread = await presentThread(gateway, accountOf(request), numberId, chat);
      return reply.header('cache-control', 'no-store').send({ version: thread.version, html: await Thread({ bubbles: thread.bubbles }) });
    },
  );

  // Members read; owners and admins, who may hold the account's keys, send (ADR 0073).
  app.post<ChatParams>('/conversations/:numberId/:chat/reply', { preHandler: requireManager }, async (request, reply) => {
    const account = accountOf(request);
    const { numberId, chat } = request.params;
    // The send needs only the number and the chat: the page is built only to show a refusal.
    const target = await presentReplyTarget(gateway, account, numberId, chat);
    const text = formText(request.body, 'message');
    const key = formText(request.body, 'reply_key');
    const sent = await attempt(() =>
      gateway.chatReplies.send(account.scope, userActor(request), {
        fromPhone: target.numberPhone,
        to: target.isGroup ? { group: target.chatId } : { phone: target.chatId },
        text,
        idempotencyKey: REPLY_KEY.test(key) ? key : newReplyKey(),
        audited: { via: 'dashboard' },
      }),
    );
    if (!sent.ok) {
      const view = await presentConversation(gateway, account, numberId, chat, true);
      const failed = { ...view, draft: text, error: sent.error.message };
      return sendPage(
        reply,
        ConversationPage({ context: pageContext(request, reply, view.title, 'chats'), view: failed }),
        httpStatusFor(sent.error.code),
      );
    }
    return reply.redirect(target.href, 303);
  });
}
