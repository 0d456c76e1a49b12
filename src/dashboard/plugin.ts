import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import { htmlSecurityHeaders } from '../web/security-headers.ts';
import { bodyDeadlineHook } from '../web/body-deadline.ts';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, httpStatusFor } from '../domain/errors.ts';
import type { GatewayServices } from '../ports/gateway-services.ts';
import { csrfUserInfo, pageContext, sendPage } from './context.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerInviteRoutes } from './routes/invite.ts';
import { type OperatorConsoleServices, registerOperatorRoutes } from './routes/operator-console.ts';
import { registerTeamRoutes } from './routes/team.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerOverviewRoutes } from './routes/overview.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { registerMessagesRoutes } from './routes/messages.ts';
import { registerNumbersRoutes } from './routes/numbers.ts';
import { registerConversationRoutes } from './routes/conversations.ts';
import { registerActivityRoutes } from './routes/activity.ts';
import { sessionTokenFrom } from './session-cookie.ts';
import { ErrorPage } from './views/auth-pages.tsx';
import { namedScope } from '../web/named-scope.ts';

/**
 * What this module uses of the gateway's services (docs/adr/0061): what the operator console
 * needs, and what the account pages need beside it.
 */
type Services = OperatorConsoleServices &
  Pick<
    GatewayServices,
    | 'activity'
    | 'chatReplies'
    | 'chats'
    | 'dashboardSigningKey'
    | 'groups'
    | 'history'
    | 'media'
    | 'pauses'
    | 'polls'
    | 'numberControl'
    | 'sandboxInbox'
    | 'sendQueues'
    | 'signIn'
    | 'webhooks'
  >;

const ASSETS_DIRECTORY = fileURLToPath(new URL('./assets/', import.meta.url));

/**
 * The web dashboard, registered as its own encapsulated plugin: form parsing, cookies, CSRF,
 * security headers and the HTML error pages apply to its routes only, so the public JSON API
 * behaves exactly as it does without it.
 */
export async function registerDashboard(app: FastifyInstance, gateway: Services): Promise<void> {
  await app.register(
    namedScope('dashboard', async (dashboard) => {
      // The dashboard answers browsers with HTML and redirects; the OpenAPI document describes the
      // public JSON API only, so every route registered here is hidden from it.
      dashboard.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      await dashboard.register(cookie);
      await dashboard.register(formbody, { bodyLimit: 64 * 1024 });
      await dashboard.register(helmet, htmlSecurityHeaders);
      await dashboard.register(csrfProtection, {
        sessionPlugin: '@fastify/cookie',
        cookieKey: 'wagw_csrf',
        cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: 'auto' },
        getUserInfo: csrfUserInfo,
        csrfOpts: { hmacKey: gateway.dashboardSigningKey },
      });
      await dashboard.register(fastifyStatic, { root: ASSETS_DIRECTORY, prefix: '/assets/', decorateReply: false, maxAge: '1h' });

      dashboard.decorateRequest('viewer', null);
      dashboard.addHook('onRequest', async (request) => {
        const token = sessionTokenFrom(request);
        if (token === undefined) return;
        const resumed = await gateway.signIn.resume(token, new Date(), { touch: request.routeOptions.config.passiveSession !== true });
        if (resumed === undefined) return;
        const account = resumed.user.accountId === null ? null : await gateway.accounts.getAccount(resumed.user.accountId);
        request.viewer = { user: resumed.user, sessionId: resumed.session.id, account };
      });
      // A form sent without a session (sign-in, an invite, or any form that will be refused) gets
      // a deadline for its body, so that no one without an account can hold connections with it.
      dashboard.addHook(
        'preParsing',
        bodyDeadlineHook(gateway.config.http.unauthenticatedBodyTimeoutMs, (request) => request.viewer === null),
      );
      dashboard.addHook('preHandler', (request, reply, done) => {
        if (request.method === 'POST') dashboard.csrfProtection(request, reply, done);
        else done();
      });
      dashboard.addHook('onSend', async (_request, reply) => {
        // Pages can hold a secret shown once; no cache should keep a copy.
        if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) void reply.header('cache-control', 'no-store');
      });
      dashboard.setErrorHandler((error: FastifyError | AppError, request, reply) => renderError(error, request, reply));

      registerAuthRoutes(dashboard, gateway);
      registerOverviewRoutes(dashboard, gateway);
      registerTeamRoutes(dashboard, gateway);
      registerInviteRoutes(dashboard, gateway);
      registerOperatorRoutes(dashboard, gateway);
      registerKeyRoutes(dashboard, gateway);
      registerWebhookRoutes(dashboard, gateway);
      registerNumbersRoutes(dashboard, gateway);
      registerMessagesRoutes(dashboard, gateway);
      registerConversationRoutes(dashboard, gateway);
      registerActivityRoutes(dashboard, gateway);
    }),
  );
}

async function renderError(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  let status: number;
  let message: string;
  if (error instanceof AppError && error.code !== 'internal_error') {
    status = httpStatusFor(error.code);
    message = error.message;
  } else if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
    status = 403;
    message = 'This form has expired or did not come from this dashboard. Go back, reload the page and try again.';
  } else if (isClientError(error)) {
    status = error.statusCode;
    message = 'The request could not be read.';
  } else {
    request.log.error({ err: error }, 'dashboard page failed');
    status = 500;
    message = `Something went wrong on our side. The request id is ${request.id}.`;
  }
  return sendPage(reply, ErrorPage({ context: pageContext(request, reply, 'Error', 'none'), status, message }), status);
}

function isClientError(error: FastifyError | AppError): error is FastifyError & { statusCode: number } {
  const statusCode = (error as FastifyError).statusCode;
  return typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500;
}
