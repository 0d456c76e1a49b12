import type { PageContext } from '../context.ts';
import type { AccountRef, OperatorUserView } from '../presenters/operator.ts';
import { ActionButton, EmptyState, ErrorSummary, PostForm, SecretReveal, Time, GeneratedPasswordField, UserEmail } from './components.tsx';
import { AccountLink, AccountOptions, OperatorFrame } from './operator-shared.tsx';
import { RoleOptions } from './team-page.tsx';

export interface CreateUserForm {
  email: string;
  /** 'none' means no account, which only an operator may have. */
  accountId: string;
  role: string;
  isOperator: boolean;
}

export interface OperatorUsersState {
  error?: string;
  form: CreateUserForm;
  /** A password shown once: after a reset, or when one was generated for a new user. */
  reveal?: { id: 'reset-password' | 'generated-password'; label: string; value: string };
}

export const NO_ACCOUNT = 'none';

export function OperatorUsersPage(props: {
  context: PageContext;
  users: OperatorUserView[];
  accounts: AccountRef[];
  state: OperatorUsersState;
}): JSX.Element {
  const { context, state } = props;
  return (
    <OperatorFrame context={context} section="users" title="Users">
      <ErrorSummary error={state.error} />
      {state.reveal === undefined ? (
        ''
      ) : (
        <section class="card" aria-label="New password">
          <SecretReveal id={state.reveal.id} label={state.reveal.label} value={state.reveal.value} />
          <p class="hint">Shown only now. Pass it on; the user can change it under Password after signing in.</p>
        </section>
      )}
      {props.users.length === 0 ? (
        <EmptyState empty={{ text: 'No users yet. Create one below.' }} />
      ) : (
        <UsersTable users={props.users} csrfToken={context.csrfToken} />
      )}
      <CreateUserSection accounts={props.accounts} form={state.form} csrfToken={context.csrfToken} />
    </OperatorFrame>
  );
}

function UsersTable(props: { users: OperatorUserView[]; csrfToken: string }): JSX.Element {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Account</th>
            <th scope="col">Role</th>
            <th scope="col">Operator</th>
            <th scope="col">Added</th>
            <th scope="col">Manage</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map((user) => (
            <tr>
              <td>
                <UserEmail email={user.email} badge={user.isViewer && 'you'} />
              </td>
              <td>
                <AccountLink account={user.account} />
              </td>
              <td>{user.account === null ? '—' : user.role}</td>
              <td>{user.isOperator ? <span class="badge status-enabled">operator</span> : <span class="muted">no</span>}</td>
              <td>
                <Time at={user.createdAt} />
              </td>
              <td>
                <UserActions user={user} csrfToken={props.csrfToken} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function UserActions(props: { user: OperatorUserView; csrfToken: string }): JSX.Element {
  const { user } = props;
  const base = `/operator/users/${encodeURIComponent(user.id)}`;
  return (
    <div class="actions">
      <ActionButton
        action={`${base}/reset-password`}
        csrfToken={props.csrfToken}
        label="Reset password"
        confirm={`Give ${user.email} a new generated password? Their current password stops working and they are signed out.`}
      />
      <PostForm action={`${base}/operator`} csrfToken={props.csrfToken} class="inline">
        <input type="hidden" name="operator" value={user.isOperator ? 'false' : 'true'} />
        <button type="submit" class="button small">
          {user.isOperator ? 'Remove operator' : 'Make operator'}
        </button>
      </PostForm>
    </div>
  );
}

function CreateUserSection(props: { accounts: AccountRef[]; form: CreateUserForm; csrfToken: string }): JSX.Element {
  const { form } = props;
  return (
    <>
      <h2 id="create-user-heading">Create user</h2>
      <section class="card" aria-labelledby="create-user-heading">
        <PostForm action="/operator/users" csrfToken={props.csrfToken} class="row">
          <div class="field">
            <label for="new-user-email">Email</label>
            <input id="new-user-email" name="email" type="email" required value={form.email} />
          </div>
          <div class="field">
            <label for="new-user-account">Account</label>
            <select id="new-user-account" name="account_id">
              <option value={NO_ACCOUNT} selected={form.accountId === NO_ACCOUNT}>
                None (operators only)
              </option>
              <AccountOptions accounts={props.accounts} selected={form.accountId} />
            </select>
          </div>
          <div class="field">
            <label for="new-user-role">Role</label>
            <select id="new-user-role" name="role">
              <RoleOptions selected={form.role} />
            </select>
          </div>
          <GeneratedPasswordField id="new-user-password" />
          <fieldset>
            <legend class="small">Operator console</legend>
            <label>
              <input type="checkbox" name="is_operator" value="true" checked={form.isOperator} /> Operator
            </label>
          </fieldset>
          <button type="submit" class="button primary">
            Create user
          </button>
        </PostForm>
        <p class="hint">A user without an account must be an operator: there is nothing else for them to open.</p>
      </section>
    </>
  );
}
