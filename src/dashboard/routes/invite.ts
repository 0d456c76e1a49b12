import type { FastifyInstance } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import type { Gateway } from '../../main.ts';
import { pageContext, sendPage } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentInvite } from '../presenters/team.ts';
import { startBrowserSession } from '../session-cookie.ts';
import { InvitePage } from '../views/invite-page.tsx';

interface InviteParams {
  token: string;
}

/**
 * `/invite/:token`: joining an account through an invite link. No sign-in is needed, the link is
 * the permission; an unknown, used or expired link answers 404 with the service's message.
 */
export function registerInviteRoutes(app: FastifyInstance, gateway: Gateway): void {
  const sessionMaxAgeMs = gateway.config.dashboard.sessionAbsoluteTimeoutMs;

  app.get<{ Params: InviteParams }>('/invite/:token', async (request, reply) => {
    const view = await presentInvite(gateway, request.params.token, request.viewer);
    const context = pageContext(request, reply, 'Join an account', 'none');
    return sendPage(reply, InvitePage({ context, token: request.params.token, view, form: { email: '', error: undefined } }));
  });

  app.post<{ Params: InviteParams }>('/invite/:token', async (request, reply) => {
    const { token } = request.params;
    // Checked first, so that a dead link is a 404 whatever the form holds.
    const view = await presentInvite(gateway, token, request.viewer);
    const email = formText(request.body, 'email');
    const password = formText(request.body, 'password');
    const joined = await attempt(() => gateway.team.acceptInvite(token, email, password));
    if (!joined.ok) {
      if (joined.error.code === 'invite_not_found') throw joined.error;
      const context = pageContext(request, reply, 'Join an account', 'none');
      return sendPage(reply, InvitePage({ context, token, view, form: { email, error: joined.error.message } }), httpStatusFor(joined.error.code));
    }
    const signedIn = await attempt(() => gateway.signIn.signIn({ email, password, ip: request.ip, userAgent: request.headers['user-agent'] }));
    // The user exists either way; a throttled address signs in by hand a little later.
    if (!signedIn.ok) return redirectWithNotice(reply, '/login', 'joined_sign_in');
    await startBrowserSession(request, reply, gateway.signIn, signedIn.value.token, sessionMaxAgeMs);
    return redirectWithNotice(reply, '/', 'welcome');
  });
}
