import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage, viewerOf, operatorScopeOf, userActor } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentOperatorUsers } from '../presenters/operator.ts';
import { NO_ACCOUNT, OperatorUsersPage, type CreateUserForm, type OperatorUsersState } from '../views/operator-users-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'numbers' | 'numberControl' | 'supervisor' | 'system' | 'team'>;

interface UserParams {
  userId: string;
}

/** `/operator/users`: every user of the gateway, password resets, operator rights, new users. */
export function registerOperatorUserRoutes(app: FastifyInstance, gateway: Services): void {
  const render = async (request: FastifyRequest, reply: FastifyReply, state: Partial<OperatorUsersState>, status = 200) => {
    const { users, accounts } = await presentOperatorUsers(gateway, operatorScopeOf(request), viewerOf(request).user.id);
    // A fresh form suggests the first account, since most new users belong to one.
    const form = state.form ?? { email: '', accountId: accounts[0]?.id ?? NO_ACCOUNT, role: 'member', isOperator: false };
    const context = pageContext(request, reply, 'Users', 'operator');
    return sendPage(reply, OperatorUsersPage({ context, users, accounts, state: { ...state, form } }), status);
  };

  app.get('/operator/users', async (request, reply) => render(request, reply, {}));

  app.post('/operator/users', async (request, reply) => {
    const form = createUserForm(request.body);
    const password = formText(request.body, 'password');
    const result = await attempt(() =>
      gateway.accounts.createUser(
        {
          email: form.email,
          isOperator: form.isOperator,
          // A role means something only inside an account; without one the service picks its default.
          accountId: form.accountId === NO_ACCOUNT ? null : form.accountId,
          ...(form.accountId !== NO_ACCOUNT && { role: form.role }),
          ...(password !== '' && { password }),
        },
        userActor(request),
      ),
    );
    if (!result.ok) return render(request, reply, { error: result.error.message, form }, httpStatusFor(result.error.code));
    const { user, generatedPassword } = result.value;
    if (generatedPassword === undefined) return redirectWithNotice(reply, '/operator/users', 'user_created');
    // Shown once, in this response only.
    return render(
      request,
      reply,
      { reveal: { id: 'generated-password', label: `Password for ${user.email}`, value: generatedPassword } },
      201,
    );
  });

  app.post<{ Params: UserParams }>('/operator/users/:userId/reset-password', async (request, reply) => {
    const reset = await attempt(() => gateway.team.resetPassword(request.params.userId, userActor(request), viewerOf(request).user.id));
    if (!reset.ok) return render(request, reply, { error: reset.error.message }, httpStatusFor(reset.error.code));
    const { user, password } = reset.value;
    return render(request, reply, { reveal: { id: 'reset-password', label: `New password for ${user.email}`, value: password } });
  });

  app.post<{ Params: UserParams }>('/operator/users/:userId/operator', async (request, reply) => {
    const makeOperator = formText(request.body, 'operator') === 'true';
    const result = await attempt(() =>
      gateway.team.setOperator(request.params.userId, makeOperator, viewerOf(request).user.id, userActor(request)),
    );
    if (!result.ok) return render(request, reply, { error: result.error.message }, httpStatusFor(result.error.code));
    return redirectWithNotice(reply, '/operator/users', 'operator_changed');
  });
}

function createUserForm(body: unknown): CreateUserForm {
  return {
    email: formText(body, 'email'),
    accountId: formText(body, 'account_id') || NO_ACCOUNT,
    role: formText(body, 'role') || 'member',
    isOperator: formText(body, 'is_operator') === 'true',
  };
}
