import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, httpStatusFor } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage, operatorScopeOf, userActor } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { engineChoices, planChoices, presentAccountList, presentOperatorAccount } from '../presenters/operator.ts';
import { OperatorAccountPage, type AccountForm, type OperatorAccountState } from '../views/operator-account-page.tsx';
import { OperatorAccountsPage, type CreateAccountForm } from '../views/operator-accounts-page.tsx';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'numbers' | 'numberControl' | 'supervisor' | 'system'>;

interface AccountParams {
  accountId: string;
}

/** `/operator/accounts`: every account, creating one, and one account's plan, users and numbers. */
export function registerOperatorAccountRoutes(app: FastifyInstance, gateway: Services): void {
  const renderList = async (request: FastifyRequest, reply: FastifyReply, form: CreateAccountForm, status = 200) => {
    const accounts = await presentAccountList(gateway);
    return sendPage(
      reply,
      OperatorAccountsPage({ context: pageContext(request, reply, 'Accounts', 'operator'), accounts, plans: planChoices(), form }),
      status,
    );
  };
  const renderAccount = async (
    request: FastifyRequest<{ Params: AccountParams }>,
    reply: FastifyReply,
    state: OperatorAccountState,
    status = 200,
  ) => {
    const view = await presentOperatorAccount(gateway, operatorScopeOf(request), request.params.accountId);
    const context = pageContext(request, reply, view.summary.name, 'operator');
    return sendPage(reply, OperatorAccountPage({ context, view, plans: planChoices(), engines: engineChoices(gateway), state }), status);
  };
  const renderFailure = (
    request: FastifyRequest<{ Params: AccountParams }>,
    reply: FastifyReply,
    form: AccountForm,
    error: AppError,
    state: OperatorAccountState,
  ) => renderAccount(request, reply, { ...state, error: { form, message: error.message } }, httpStatusFor(error.code));

  app.get('/operator/accounts', async (request, reply) => renderList(request, reply, { name: '', plan: 'starter', error: undefined }));

  app.post('/operator/accounts', async (request, reply) => {
    const name = formText(request.body, 'name');
    const plan = formText(request.body, 'plan');
    const result = await attempt(() => gateway.accounts.createAccount({ name, plan }, userActor(request)));
    if (!result.ok) return renderList(request, reply, { name, plan, error: result.error.message }, httpStatusFor(result.error.code));
    return redirectWithNotice(reply, accountPath(result.value.id), 'account_created');
  });

  app.get<{ Params: AccountParams }>('/operator/accounts/:accountId', async (request, reply) => renderAccount(request, reply, {}));

  app.post<{ Params: AccountParams }>('/operator/accounts/:accountId/plan', async (request, reply) => {
    const plan = formText(request.body, 'plan');
    const customMonthlyLimit = formText(request.body, 'custom_monthly_limit').trim();
    const result = await attempt(() =>
      gateway.accounts.updateAccount(
        request.params.accountId,
        { plan, customMonthlyLimit: parseCustomLimit(customMonthlyLimit) },
        userActor(request),
      ),
    );
    if (!result.ok) return renderFailure(request, reply, 'plan', result.error, { plan: { plan, customMonthlyLimit } });
    return redirectWithNotice(reply, accountPath(request.params.accountId), 'account_updated');
  });

  app.post<{ Params: AccountParams }>('/operator/accounts/:accountId/users', async (request, reply) => {
    const { accountId } = request.params;
    const email = formText(request.body, 'email');
    const role = formText(request.body, 'role');
    const password = formText(request.body, 'password');
    const result = await attempt(() =>
      gateway.accounts.createUser({ accountId, email, role, ...(password !== '' && { password }) }, userActor(request)),
    );
    if (!result.ok) return renderFailure(request, reply, 'user', result.error, { user: { email, role } });
    const { user, generatedPassword } = result.value;
    // A generated password exists only in this response, so the page answers instead of redirecting.
    if (generatedPassword !== undefined)
      return renderAccount(request, reply, { generatedPassword: { email: user.email, password: generatedPassword } }, 201);
    return redirectWithNotice(reply, accountPath(accountId), 'user_created');
  });

  app.post<{ Params: AccountParams }>('/operator/accounts/:accountId/numbers', async (request, reply) => {
    const phone = formText(request.body, 'phone');
    const engine = formText(request.body, 'engine') || 'sandbox';
    const result = await attempt(() =>
      gateway.numbers.addNumber(operatorScopeOf(request), { accountId: request.params.accountId, phone, engine }, userActor(request)),
    );
    if (!result.ok) return renderFailure(request, reply, 'number', result.error, { number: { phone, engine } });
    return redirectWithNotice(reply, accountPath(request.params.accountId), 'number_added');
  });
}

function accountPath(accountId: string): string {
  return `/operator/accounts/${encodeURIComponent(accountId)}`;
}

/** Blank means the plan's own volume. */
function parseCustomLimit(raw: string): number | null {
  if (raw === '') return null;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new AppError(
      'invalid_argument',
      `The custom monthly limit must be a whole number of messages, or blank for the plan's volume; got "${raw}".`,
    );
  }
  return Number(raw);
}
