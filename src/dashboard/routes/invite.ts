import type { FastifyInstance } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage } from '../context.ts';
import { attempt, formText, retryAfterSeconds } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentInvite } from '../presenters/team.ts';
import { clearSessionCookie, sessionTokenFrom } from '../session-cookie.ts';
import { InvitePage } from '../views/invite-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'signIn' | 'team'>;

interface InviteParams {
  token: string;
}

/**
 * `/invite/:token`: joining an account through an invite link. No sign-in is needed, the link is
 * the permission; an unknown, used or expired link answers 404 with the service's message.
 *
 * A submission that joins and one whose email already has a user get the same answer, a
 * redirect to the sign-in page with one notice that is true of both, and neither signs anyone
 * in: a difference, even a session cookie, would tell the submitter whether the email is
 * registered (docs/dashboard.md). Submissions are throttled per address like sign-ins.
 */
export function registerInviteRoutes(app: FastifyInstance, gateway: Services): void {
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
    const joined = await attempt(async () => {
      await gateway.signIn.admitInviteSubmission(request.ip);
      return gateway.team.acceptInvite(token, email, password);
    });
    if (!joined.ok) {
      if (joined.error.code === 'invite_not_found') throw joined.error;
      if (joined.error.code === 'sign_in_throttled') void reply.header('Retry-After', String(retryAfterSeconds(joined.error)));
      const context = pageContext(request, reply, 'Join an account', 'none');
      return sendPage(
        reply,
        InvitePage({ context, token, view, form: { email: email.slice(0, 254), error: joined.error.message } }),
        httpStatusFor(joined.error.code),
      );
    }
    // Whoever was signed in on this browser is signed out, so the sign-in page is the next step.
    const current = sessionTokenFrom(request);
    if (current !== undefined) await gateway.signIn.signOut(current);
    clearSessionCookie(request, reply);
    return redirectWithNotice(reply, '/login', 'invite_submitted');
  });
}
