import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, pageContext, requireAccountMember, sendPage } from '../context.ts';
import { presentMessages, readMessageFilters } from '../presenters/messages.ts';
import { MessagesPage } from '../views/messages-page.tsx';
import { serveMedia } from '../../web/serve-media.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'history' | 'media' | 'numbers'>;

/** `/messages`: the account's sent and received messages, filtered and a page at a time. */
export function registerMessagesRoutes(app: FastifyInstance, gateway: Services): void {
  app.get('/messages', { preHandler: requireAccountMember }, async (request, reply) => {
    const view = await presentMessages(gateway, accountOf(request), readMessageFilters(request.query));
    const context = pageContext(request, reply, 'Messages', 'messages');
    return sendPage(reply, MessagesPage({ context, view }), view.error === undefined ? 200 : 400);
  });

  // A message's file, for the thumbnails and download links of the page: the session's account only.
  app.get<{ Params: { id: string } }>('/messages/media/:id', { preHandler: requireAccountMember }, async (request, reply) => {
    const media = await gateway.media.find(accountOf(request).scope.accountId, request.params.id, 'id');
    return serveMedia(gateway.media, request, reply, media);
  });
}
