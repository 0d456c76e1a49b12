import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor, type AppError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { accountOf, pageContext, requireAccountMember, requireOwner, sendPage, userActor, viewerOf } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentTeam, type TeamPageState } from '../presenters/team.ts';
import { TeamPage } from '../views/team-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'team'>;

interface UserParams {
  userId: string;
}

interface InviteParams {
  inviteId: string;
}

const DEFAULT_INVITE_ROLE = 'member';

/** `/team`: the account's users for every member; invites, roles and removal for owners. */
export function registerTeamRoutes(app: FastifyInstance, gateway: Services): void {
  const renderTeam = async (request: FastifyRequest, reply: FastifyReply, state: TeamPageState, status = 200): Promise<FastifyReply> => {
    const view = await presentTeam(gateway, viewerOf(request), accountOf(request));
    return sendPage(reply, TeamPage({ context: pageContext(request, reply, 'Team', 'team'), view, state }), status);
  };
  const renderFailure = (request: FastifyRequest, reply: FastifyReply, error: AppError, inviteRole = DEFAULT_INVITE_ROLE) =>
    renderTeam(request, reply, { error: error.message, inviteRole }, httpStatusFor(error.code));

  app.get('/team', { preHandler: requireAccountMember }, async (request, reply) =>
    renderTeam(request, reply, { inviteRole: DEFAULT_INVITE_ROLE }),
  );

  app.post('/team/invites', { preHandler: requireOwner }, async (request, reply) => {
    const role = formText(request.body, 'role');
    const result = await attempt(() =>
      gateway.team.createInvite(accountOf(request).id, role, viewerOf(request).user.id, new Date(), userActor(request)),
    );
    if (!result.ok) return renderFailure(request, reply, result.error, role);
    // The token is shown once, right here, so this answers with the page rather than a redirect.
    const inviteLink = `${request.protocol}://${request.host}/invite/${result.value.token}`;
    return renderTeam(request, reply, { inviteLink, inviteRole: role }, 201);
  });

  app.post<{ Params: InviteParams }>('/team/invites/:inviteId/revoke', { preHandler: requireOwner }, async (request, reply) => {
    const result = await attempt(() => gateway.team.revokeInvite(accountOf(request).id, request.params.inviteId, userActor(request)));
    if (!result.ok) return renderFailure(request, reply, result.error);
    return redirectWithNotice(reply, '/team', 'invite_revoked');
  });

  app.post<{ Params: UserParams }>('/team/:userId/role', { preHandler: requireOwner }, async (request, reply) => {
    const result = await attempt(() =>
      gateway.team.changeRole(accountOf(request).id, request.params.userId, formText(request.body, 'role'), userActor(request)),
    );
    if (!result.ok) return renderFailure(request, reply, result.error);
    return redirectWithNotice(reply, '/team', 'role_changed');
  });

  app.post<{ Params: UserParams }>('/team/:userId/remove', { preHandler: requireOwner }, async (request, reply) => {
    const viewer = viewerOf(request);
    const result = await attempt(() =>
      gateway.team.removeMember(accountOf(request).id, request.params.userId, userActor(request), viewer.user.id),
    );
    if (!result.ok) return renderFailure(request, reply, result.error);
    return redirectWithNotice(reply, '/team', 'member_removed');
  });
}
