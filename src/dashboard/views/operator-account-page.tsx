import type { PageContext } from '../context.ts';
import type { AccountKeyView, AccountNumberView, AccountUserView, Choice, OperatorAccountView } from '../presenters/operator.ts';
import { formatCount } from '../presenters/shared.ts';
import { EmptyState, ErrorSummary, GeneratedPasswordField, NumberStatus, PostForm, SecretReveal, Time, UserEmail } from './components.tsx';
import { limitText } from './operator-accounts-page.tsx';
import { ChoiceOptions, OperatorFrame } from './operator-shared.tsx';
import { RoleOptions } from './team-page.tsx';

export type AccountForm = 'plan' | 'user' | 'number';

/** A failed form keeps what was typed; a generated password is shown once. */
export interface OperatorAccountState {
  error?: { form: AccountForm; message: string };
  plan?: { plan: string; customMonthlyLimit: string };
  user?: { email: string; role: string };
  number?: { phone: string; engine: string };
  generatedPassword?: { email: string; password: string };
}

interface AccountPageProps {
  context: PageContext;
  view: OperatorAccountView;
  plans: Choice[];
  engines: Choice[];
  state: OperatorAccountState;
}

export function OperatorAccountPage(props: AccountPageProps): JSX.Element {
  const { context, view, state } = props;
  const base = `/operator/accounts/${encodeURIComponent(view.summary.id)}`;
  return (
    <OperatorFrame context={context} section="accounts" title={view.summary.name}>
      <p>
        <a href="/operator/accounts">← All accounts</a>
      </p>
      <div class="grid">
        <AccountFacts view={view} />
        <PlanForm action={`${base}/plan`} view={view} plans={props.plans} state={state} csrfToken={context.csrfToken} />
      </div>
      <h2 id="users-heading">Users</h2>
      {state.generatedPassword === undefined ? (
        ''
      ) : (
        <section class="card" aria-label="Generated password">
          <SecretReveal
            id="generated-password"
            label={`Password for ${state.generatedPassword.email}`}
            value={state.generatedPassword.password}
          />
          <p class="hint">Shown only now. Pass it on; the user can change it under Password after signing in.</p>
        </section>
      )}
      <UsersTable users={view.users} />
      <AddUserForm action={`${base}/users`} suggestedRole={view.suggestedRole} state={state} csrfToken={context.csrfToken} />
      <h2 id="numbers-heading">Numbers</h2>
      <NumbersTable numbers={view.numbers} />
      <AddNumberForm action={`${base}/numbers`} engines={props.engines} state={state} csrfToken={context.csrfToken} />
      <h2 id="keys-heading">API keys</h2>
      <KeysTable keys={view.apiKeys} />
    </OperatorFrame>
  );
}

function AccountFacts(props: { view: OperatorAccountView }): JSX.Element {
  const { summary, resetsAt } = props.view;
  return (
    <section class="card" aria-label="Account facts">
      <dl class="facts">
        <dt>Id</dt>
        <dd class="mono" safe>
          {summary.id}
        </dd>
        <dt>Plan</dt>
        <dd safe>{summary.plan}</dd>
        <dt>Monthly limit</dt>
        <dd safe>{limitText(summary.limit, summary.isCustomLimit)}</dd>
        <dt>Used this month</dt>
        <dd safe>{formatCount(summary.used)}</dd>
        <dt>Resets</dt>
        <dd>
          <Time at={resetsAt} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time at={summary.createdAt} />
        </dd>
      </dl>
    </section>
  );
}

function PlanForm(props: {
  action: string;
  view: OperatorAccountView;
  plans: Choice[];
  state: OperatorAccountState;
  csrfToken: string;
}): JSX.Element {
  const { view, state } = props;
  const values = state.plan ?? {
    plan: view.planValue,
    customMonthlyLimit: view.customMonthlyLimit === null ? '' : String(view.customMonthlyLimit),
  };
  return (
    <section class="card" aria-labelledby="plan-heading">
      <h2 id="plan-heading">Plan</h2>
      <ErrorSummary error={state.error?.form === 'plan' ? state.error.message : undefined} />
      <PostForm action={props.action} csrfToken={props.csrfToken} class="stack">
        <label for="plan-plan">Plan</label>
        <select id="plan-plan" name="plan">
          <ChoiceOptions choices={props.plans} selected={values.plan} />
        </select>
        <label for="plan-custom-limit">Custom monthly limit</label>
        <input
          id="plan-custom-limit"
          name="custom_monthly_limit"
          type="number"
          min="0"
          step="1"
          value={values.customMonthlyLimit}
          aria-describedby="plan-custom-limit-hint"
        />
        <p id="plan-custom-limit-hint" class="hint">
          Messages a month. Leave blank to use the plan's volume.
        </p>
        <button type="submit" class="button primary">
          Save plan
        </button>
      </PostForm>
    </section>
  );
}

function UsersTable(props: { users: AccountUserView[] }): JSX.Element {
  if (props.users.length === 0)
    return <EmptyState empty={{ text: 'No users yet. Add the owner below; they can invite the rest from the Team page.' }} />;
  return (
    <div class="table-wrap">
      <table aria-labelledby="users-heading">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Added</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map((user) => (
            <tr>
              <td>
                <UserEmail email={user.email} badge={user.isOperator && 'operator'} />
              </td>
              <td>
                <span class="badge">{user.role}</span>
              </td>
              <td>
                <Time at={user.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AddUserForm(props: { action: string; suggestedRole: string; state: OperatorAccountState; csrfToken: string }): JSX.Element {
  const { state } = props;
  const values = state.user ?? { email: '', role: props.suggestedRole };
  return (
    <section class="card" aria-labelledby="add-user-heading">
      <h3 id="add-user-heading">Add user</h3>
      <ErrorSummary error={state.error?.form === 'user' ? state.error.message : undefined} />
      <PostForm action={props.action} csrfToken={props.csrfToken} class="row">
        <div class="field">
          <label for="user-email">Email</label>
          <input id="user-email" name="email" type="email" required value={values.email} />
        </div>
        <div class="field">
          <label for="user-role">Role</label>
          <select id="user-role" name="role">
            <RoleOptions selected={values.role} />
          </select>
        </div>
        <GeneratedPasswordField id="user-password" />
        <button type="submit" class="button primary">
          Create user
        </button>
      </PostForm>
    </section>
  );
}

function NumbersTable(props: { numbers: AccountNumberView[] }): JSX.Element {
  if (props.numbers.length === 0)
    return <EmptyState empty={{ text: 'No numbers yet. Add a sandbox number below to try the account out.' }} />;
  return (
    <div class="table-wrap">
      <table aria-labelledby="numbers-heading">
        <thead>
          <tr>
            <th scope="col">Number</th>
            <th scope="col">Engine</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {props.numbers.map((number) => (
            <tr>
              <td class="mono">
                <a href={`/operator/numbers/${encodeURIComponent(number.id)}`} safe>
                  {number.phone}
                </a>
              </td>
              <td safe>{number.engine}</td>
              <td>
                <NumberStatus id={number.id} status={number.status} reason={number.statusReason} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AddNumberForm(props: { action: string; engines: Choice[]; state: OperatorAccountState; csrfToken: string }): JSX.Element {
  const { state } = props;
  const values = state.number ?? { phone: '', engine: 'sandbox' };
  return (
    <section class="card" aria-labelledby="add-number-heading">
      <h3 id="add-number-heading">Add number</h3>
      <ErrorSummary error={state.error?.form === 'number' ? state.error.message : undefined} />
      <PostForm action={props.action} csrfToken={props.csrfToken} class="row">
        <div class="field">
          <label for="number-phone">Phone number</label>
          <input id="number-phone" name="phone" type="tel" required placeholder="+447700900123" value={values.phone} />
        </div>
        <div class="field">
          <label for="number-engine">Engine</label>
          <select id="number-engine" name="engine">
            <ChoiceOptions choices={props.engines} selected={values.engine} />
          </select>
        </div>
        <button type="submit" class="button primary">
          Add number
        </button>
      </PostForm>
    </section>
  );
}

function KeysTable(props: { keys: AccountKeyView[] }): JSX.Element {
  if (props.keys.length === 0)
    return <EmptyState empty={{ text: 'No API keys yet. Owners and admins create them on the API keys page of the account.' }} />;
  return (
    <div class="table-wrap">
      <table aria-labelledby="keys-heading">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Revoked</th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr>
              <td safe>{key.name}</td>
              <td class="mono" safe>
                {key.hint}
              </td>
              <td>
                <Time at={key.createdAt} />
              </td>
              <td>
                <Time at={key.lastUsedAt} />
              </td>
              <td>{key.revokedAt === null ? <span class="muted">no</span> : <Time at={key.revokedAt} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
