import type { FastifyInstance } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import { MAX_EMAIL_LENGTH } from '../../accounts/sign-in-service.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, requireSignedIn, sendPage, viewerOf } from '../context.ts';
import { attempt, formText, queryText, retryAfterSeconds, safeNextPath } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { clearSessionCookie, sessionTokenFrom, startBrowserSession } from '../session-cookie.ts';
import { ChangePasswordPage, SignInPage } from '../views/auth-pages.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'config' | 'signIn'>;

/** Sign-in, sign-out and changing one's own password. */
export function registerAuthRoutes(app: FastifyInstance, gateway: Services): void {
  const sessionMaxAgeMs = gateway.config.dashboard.sessionAbsoluteTimeoutMs;

  app.get('/login', async (request, reply) => {
    const next = safeNextPath(queryText(request.query, 'next') ?? '/');
    if (request.viewer !== null) return reply.redirect(next, 303);
    return sendPage(
      reply,
      SignInPage({ context: pageContext(request, reply, 'Sign in', 'none'), view: { email: '', next, error: undefined } }),
    );
  });

  app.post('/login', async (request, reply) => {
    const email = formText(request.body, 'email');
    const next = safeNextPath(formText(request.body, 'next') || '/');
    const result = await attempt(() =>
      gateway.signIn.signIn({
        email,
        password: formText(request.body, 'password'),
        ip: request.ip,
        userAgent: request.headers['user-agent'],
      }),
    );
    if (!result.ok) {
      const context = pageContext(request, reply, 'Sign in', 'none');
      const status = httpStatusFor(result.error.code);
      if (result.error.code === 'sign_in_throttled') void reply.header('Retry-After', String(retryAfterSeconds(result.error)));
      // The email typed is shown again, but never an oversized one.
      return sendPage(
        reply,
        SignInPage({ context, view: { email: email.slice(0, MAX_EMAIL_LENGTH), next, error: result.error.message } }),
        status,
      );
    }
    await startBrowserSession(request, reply, gateway.signIn, result.value.token, sessionMaxAgeMs);
    return reply.redirect(next, 303);
  });

  app.post('/logout', async (request, reply) => {
    const token = sessionTokenFrom(request);
    if (token !== undefined) await gateway.signIn.signOut(token);
    clearSessionCookie(request, reply);
    request.viewer = null;
    return redirectWithNotice(reply, '/login', 'signed_out');
  });

  app.get('/account/password', { preHandler: requireSignedIn }, async (request, reply) =>
    sendPage(reply, ChangePasswordPage({ context: pageContext(request, reply, 'Change password', 'password'), error: undefined })),
  );

  app.post('/account/password', { preHandler: requireSignedIn }, async (request, reply) => {
    const viewer = viewerOf(request);
    const result = await attempt(() =>
      gateway.signIn.changePassword(
        viewer.user.id,
        formText(request.body, 'current_password'),
        formText(request.body, 'new_password'),
        viewer.sessionId,
      ),
    );
    if (!result.ok) {
      return sendPage(
        reply,
        ChangePasswordPage({ context: pageContext(request, reply, 'Change password', 'password'), error: result.error.message }),
        400,
      );
    }
    return redirectWithNotice(reply, '/', 'password_changed');
  });
}
